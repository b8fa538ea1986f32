#!/usr/bin/env python3
"""ONNX Runtime alone on the shipped model: the ceiling for iret's embedding throughput.

Runs models/all-minilm-l6-v2/model.onnx with onnxruntime (the same 1.31.1 iret bundles)
over texts from a JSON-lines file (one string per line; see the `embedding_texts` example
of iret-index), tokenized by the shipped tokenizer.json truncated to the manifest's
max_length, mean-pooled: one text per run (as iret embeds), and, for comparison, batches
sorted by length.

  pip install onnxruntime==1.31.1 tokenizers numpy
  scripts/ort-ceiling.py texts.jsonl [--threads 2] [--batch 32]
  scripts/ort-ceiling.py texts.jsonl --profile 300          # time by operator
  scripts/ort-ceiling.py texts.jsonl --disable SkipLayerNormFusion --compare 300
      # one text per run with and without the optimizer, alternating; the vectors'
      # cosine to those of the default session
  scripts/ort-ceiling.py texts.jsonl --cosine-to DIR/model.onnx --cosine-texts 300
      # cosine of this session's vectors to another model's (e.g. the fp32 variant of
      # scripts/export-model.py --variant fp32 --out DIR)

iret's own session disables the optimizers in crates/iret-embed/src/onnx.rs
(DISABLED_OPTIMIZERS); pass the same --disable to measure what iret runs.
"""
import argparse
import collections
import tempfile
import json
import os
import time

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "..", "models", "all-minilm-l6-v2")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("texts")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--model", default=None, help="another .onnx file (same tokenizer)")
    ap.add_argument("--disable", default="", help="ORT optimizers to disable, comma-separated")
    ap.add_argument("--compare", type=int, metavar="N", default=0,
                    help="instead: N texts one per run, with --disable and without, twice alternately")
    ap.add_argument("--cosine-to", default=None, help="instead: cosine of the vectors to this model's")
    ap.add_argument("--cosine-texts", type=int, default=300)
    ap.add_argument("--profile", type=int, metavar="N", default=0,
                    help="instead: run the first N texts one per run with ORT's profiler and print time by operator type")
    args = ap.parse_args()
    texts = [json.loads(l) for l in open(args.texts)]
    manifest = json.load(open(os.path.join(MODEL, "manifest.json")))
    tok = Tokenizer.from_file(os.path.join(MODEL, "tokenizer.json"))
    tok.enable_truncation(manifest["max_length"])
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = args.threads
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if args.profile:
        opts.enable_profiling = True
        opts.profile_file_prefix = os.path.join(tempfile.mkdtemp(), "ort")
    model_path = args.model or os.path.join(MODEL, manifest["onnx"])
    disabled = [d for d in args.disable.split(",") if d]

    def session(path, disabled):
        return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"],
                                    disabled_optimizers=disabled)

    sess = session(model_path, disabled)
    names = [i.name for i in sess.get_inputs()]

    def vectors(s, batch):
        out = []
        for x in batch:
            e = tok.encode(x)
            ids = np.array([e.ids], dtype=np.int64)
            mask = np.array([e.attention_mask], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in [i.name for i in s.get_inputs()]:
                feed["token_type_ids"] = np.zeros_like(ids)
            v = s.run(None, feed)[0][0].mean(0)
            out.append(v / np.linalg.norm(v))
        return np.array(out)

    if args.compare:
        tok.no_padding()
        batch = texts[:args.compare]
        other = session(model_path, [])
        times = {"disabled": [], "default": []}
        for _ in range(2):
            for name, s in (("disabled", sess), ("default", other)):
                t = time.perf_counter()
                v = vectors(s, batch)
                times[name].append(time.perf_counter() - t)
                if name == "disabled":
                    va = v
                else:
                    vb = v
        c = (va * vb).sum(1)
        print(f"{len(batch)} texts one per run, disabled {disabled}: "
              f"{' '.join(f'{t:.2f}' for t in times['disabled'])} s; default: "
              f"{' '.join(f'{t:.2f}' for t in times['default'])} s")
        print(f"  cosine to the default session's vectors: min {c.min():.5f} mean {c.mean():.5f}")
        return
    if args.cosine_to:
        tok.no_padding()
        batch = texts[:args.cosine_texts]
        c = (vectors(sess, batch) * vectors(session(args.cosine_to, []), batch)).sum(1)
        print(f"{len(batch)} texts, {model_path} (disabled {disabled}) vs {args.cosine_to}: "
              f"cosine min {c.min():.5f} mean {c.mean():.5f}")
        return

    def run(batch):
        tok.enable_padding()
        enc = tok.encode_batch(batch)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in names:
            feed["token_type_ids"] = np.zeros_like(ids)
        out = sess.run(None, feed)[0]
        m = mask[..., None].astype(np.float32)
        v = (out * m).sum(1) / m.sum(1)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    run(["warm up"])
    if args.profile:
        for x in texts[:args.profile]:
            run([x])
        by_op = collections.Counter()
        for e in json.load(open(sess.end_profiling())):
            if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
                by_op[e["args"]["op_name"]] += e["dur"]
        total = sum(by_op.values())
        print(f"ORT kernel time by operator over {args.profile} texts ({total / 1e3:.0f} ms):")
        for op, us in by_op.most_common(12):
            print(f"  {op:28s} {us / 1e3:8.1f} ms {100 * us / total:5.1f}%")
        return
    t = time.perf_counter()
    for x in texts:
        run([x])
    single = time.perf_counter() - t
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    t = time.perf_counter()
    for i in range(0, len(order), args.batch):
        run([texts[j] for j in order[i:i + args.batch]])
    batched = time.perf_counter() - t
    n = len(texts)
    print(f"onnxruntime {ort.__version__}, {args.threads} threads, {n} texts, max_length {manifest['max_length']}")
    print(f"  one text per run:            {n / single:.0f} texts/s ({single:.2f} s)")
    print(f"  length-sorted batches of {args.batch}: {n / batched:.0f} texts/s ({batched:.2f} s)")


if __name__ == "__main__":
    main()
