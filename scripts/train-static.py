#!/usr/bin/env python3
"""Train the static model on code (the tokenlearn idea, solved as one linear problem).

`distill-static.py` gives every token the transformer's output for that token alone. Code
chunks are not single tokens: this script embeds real code chunks with the transformer
and fits the token table so that a chunk's static vector (the mean of its tokens' rows)
lands on the transformer's vector of that chunk:

    minimise  sum_chunks || mean_{t in chunk} E[t] - y_chunk ||^2  +  lam * || E - E0 ||^2

E0 is the distilled table (per-token outputs), which keeps rare tokens where distillation
put them. The problem is linear in E: the normal equations (A^T A + lam I) E = A^T Y + lam E0
are solved by conjugate gradients (A: chunks x vocabulary, token shares). The table is then
reduced with PCA like the distilled one, and written in the same format. No torch, no
network: the transformer in models/ and source trees on this machine are the only inputs.

Training code comes from trees that are in none of iret's benchmark sets (semble's 20 dev
repositories, SWE-bench's six, vocab-dev): by default the Rust crates in the cargo
registry (serde's crates left out), Python's standard library, the JDK's sources (src.zip),
C headers in /usr/include and npm's JavaScript.

  pip install numpy scipy onnxruntime tokenizers
  scripts/train-static.py --model models/all-minilm-l6-v2 --out models/static-minilm

Writes OUT/manifest.json (kind "static"), OUT/static.f16 and OUT/tokenizer.json, and keeps
the embedded chunks in --work (reruns with other settings skip the transformer).
"""
import argparse
import glob
import hashlib
import io
import json
import os
import random
import shutil
import sys
import time
import zipfile

import numpy as np
import onnxruntime as ort
import scipy.sparse as sp
from tokenizers import Tokenizer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
distill = __import__("distill-static")

# Benchmark repositories (and their crates) are never training data.
EXCLUDED = ("serde", "axum", "pydantic", "fastapi", "model2vec")


def default_sources():
    reg = sorted(glob.glob(os.path.expanduser("~/.cargo/registry/src/*/")))
    jdk = [p for p in sorted(glob.glob("/usr/lib/jvm/*/lib/src.zip")) if os.path.isfile(p)]
    py = sorted(glob.glob("/usr/lib/python3.*/"))
    out = []
    if reg:
        out.append(("rust", reg[0], (".rs",)))
    if py:
        out.append(("python", py[-1], (".py",)))
    if jdk:
        out.append(("java", jdk[0], (".java",)))
    out.append(("c", "/usr/include", (".h",)))
    out.append(("javascript", "/usr/lib/node_modules/npm", (".js",)))
    return out


def read_files(root, exts):
    """(path, text) of the source files under root (a folder or a zip)."""
    if root.endswith(".zip"):
        with zipfile.ZipFile(root) as z:
            for name in z.namelist():
                if name.endswith(exts):
                    yield name, z.read(name).decode("utf-8", "replace")
        return
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and not d.startswith(EXCLUDED)
                   and d not in ("test", "tests", "node_modules")]
        for f in files:
            if f.endswith(exts):
                p = os.path.join(dirpath, f)
                try:
                    if os.path.getsize(p) > 400_000:
                        continue
                    yield os.path.relpath(p, root), open(p, encoding="utf-8", errors="replace").read()
                except OSError:
                    continue


def windows(path, text, tok, budget):
    """Blank-line-aware windows of whole lines, each within `budget` tokens, headed by
    the path as iret's chunks are."""
    chunk, count = [], 0
    lines = text.splitlines()
    counts = [len(e.ids) + 1 for e in tok.encode_batch(lines, add_special_tokens=False)]
    for line, n in zip(lines, counts):
        if chunk and (count + n > budget or (not line.strip() and count > budget // 2)):
            yield chunk
            chunk, count = [], 0
        if n > budget:
            continue
        chunk.append(line)
        count += n
    if chunk:
        yield chunk


def collect(sources, tok, per_source, budget, seed):
    rng = random.Random(seed)
    chunks = []
    for name, root, exts in sources:
        if not os.path.exists(root):
            print(f"  {name}: {root} missing, skipped")
            continue
        files = sorted(read_files(root, exts))
        rng.shuffle(files)
        got = []
        for path, text in files:
            for lines in windows(path, text, tok, budget):
                if sum(1 for l in lines if l.strip()) >= 4:
                    got.append(path + "\n" + "\n".join(lines))
            if len(got) >= per_source * 3:
                break
        rng.shuffle(got)
        got = got[:per_source]
        print(f"  {name}: {len(got)} chunks from {root}")
        chunks.extend(got)
    return chunks


def embed(model_dir, tok, texts, batch=32):
    manifest = json.load(open(os.path.join(model_dir, "manifest.json")))
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = os.cpu_count() or 1
    sess = ort.InferenceSession(os.path.join(model_dir, manifest["onnx"]), opts)
    t = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    t.enable_truncation(manifest.get("max_length", 256))
    encs = [t.encode(x) for x in texts]
    order = sorted(range(len(texts)), key=lambda i: len(encs[i].ids))
    out = np.zeros((len(texts), manifest["dims"]), dtype=np.float32)
    start = time.time()
    for b in range(0, len(order), batch):
        idx = order[b : b + batch]
        width = max(len(encs[i].ids) for i in idx)
        ids = np.zeros((len(idx), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for r, i in enumerate(idx):
            e = encs[i].ids
            ids[r, : len(e)] = e
            mask[r, : len(e)] = 1
        hidden = sess.run(None, {"input_ids": ids, "attention_mask": mask,
                                 "token_type_ids": np.zeros_like(ids)})[0]
        pooled = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        out[idx] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        if b // batch % 50 == 0:
            print(f"  embedded {b + len(idx)}/{len(texts)} ({time.time() - start:.0f} s)", flush=True)
    return out


def shares(tok, texts, vocab):
    """Chunks x vocabulary: each token's share of the chunk (the static mean's weights)."""
    rows, cols, vals = [], [], []
    for r, text in enumerate(texts):
        ids = tok.encode(text, add_special_tokens=False).ids
        if not ids:
            continue
        u, c = np.unique(ids, return_counts=True)
        rows.extend([r] * len(u))
        cols.extend(u.tolist())
        vals.extend((c / len(ids)).tolist())
    return sp.csr_matrix((vals, (rows, cols)), shape=(len(texts), vocab), dtype=np.float32)


def fit(a, y, e0, lam, iters):
    """Conjugate gradients on (A^T A + lam I) E = A^T Y + lam E0, all columns at once."""
    at = a.T.tocsr()
    op = lambda e: at @ (a @ e) + lam * e
    e = e0.copy()
    r = at @ y + lam * e0 - op(e)
    p = r.copy()
    rs = (r * r).sum(0)
    for i in range(iters):
        ap_ = op(p)
        alpha = rs / np.maximum((p * ap_).sum(0), 1e-30)
        e += p * alpha
        r -= ap_ * alpha
        new = (r * r).sum(0)
        p = r + p * (new / np.maximum(rs, 1e-30))
        rs = new
    return e


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="models/all-minilm-l6-v2")
    ap.add_argument("--out", default="models/static-minilm")
    ap.add_argument("--work", default=os.path.expanduser("~/.cache/iret/train-static"))
    ap.add_argument("--per-source", type=int, default=3000, help="chunks per source tree")
    ap.add_argument("--budget", type=int, default=200, help="tokens per training chunk")
    ap.add_argument("--lam", type=float, default=1e-3, help="pull towards the distilled table")
    ap.add_argument("--iters", type=int, default=60)
    ap.add_argument("--dims", type=int, default=256)
    ap.add_argument("--sif", type=float, default=1e-4, help="SIF weighting after training (0: none)")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--center", type=int, default=1, help="fit centred targets (1) or raw ones (0)")
    args = ap.parse_args()

    tok = Tokenizer.from_file(os.path.join(args.model, "tokenizer.json"))
    os.makedirs(args.work, exist_ok=True)
    cache = os.path.join(args.work, f"chunks-{args.per_source}-{args.budget}-{args.seed}.npz")
    if os.path.exists(cache):
        z = np.load(cache, allow_pickle=True)
        texts, y = list(z["texts"]), z["y"]
        print(f"{len(texts)} embedded chunks from {cache}")
    else:
        print("collecting code chunks")
        texts = collect(default_sources(), tok, args.per_source, args.budget, args.seed)
        print(f"embedding {len(texts)} chunks with the transformer")
        y = embed(args.model, tok, texts)
        np.savez(cache, texts=np.array(texts, dtype=object), y=y)

    print("distilled table (per-token outputs)")
    tok2, outputs, source = distill.token_outputs(args.model)
    vocab = outputs.shape[0]
    a = shares(tok, texts, vocab)
    # The targets and the prior on one scale: a chunk's vector is unit length, the
    # prior rows are scaled so that their chunk means are too, on average.
    if args.center:
        # The direction every vector shares says nothing about a chunk: fit the rest.
        y = y - y.mean(axis=0, keepdims=True)
        outputs = outputs - outputs.mean(axis=0, keepdims=True)
    scale = np.median(np.linalg.norm(y, axis=1)) * np.median(
        1.0 / np.maximum(np.linalg.norm(a @ outputs, axis=1), 1e-6))
    e0 = outputs * scale
    start = time.time()
    table = fit(a, y, e0, args.lam, args.iters)
    pred = a @ table
    cos = (pred * y).sum(1) / np.maximum(np.linalg.norm(pred, axis=1), 1e-9)
    base = a @ e0
    cos0 = (base * y).sum(1) / np.maximum(np.linalg.norm(base, axis=1), 1e-9)
    print(f"fit {time.time() - start:.0f} s: mean cosine to the transformer {cos0.mean():.3f} -> {cos.mean():.3f} (training chunks)")

    reduced = distill.pca(table, args.dims, center=not args.center)
    if args.sif > 0:
        reduced *= distill.sif_weights(vocab, args.sif)[:, None]
    os.makedirs(args.out, exist_ok=True)
    reduced.astype("<f2").tofile(os.path.join(args.out, "static.f16"))
    shutil.copy(os.path.join(args.model, "tokenizer.json"), os.path.join(args.out, "tokenizer.json"))
    # The id names the weights: vectors cached or indexed under it are this table's.
    digest = hashlib.sha256(reduced.astype("<f2").tobytes()).hexdigest()[:10]
    manifest = {
        "id": f"static-{source['id']}-code-pca{args.dims}-{digest}",
        "kind": "static",
        "source_model": source["id"],
        "dims": args.dims,
        "vocab": vocab,
        "table": "static.f16",
        "recipe": (f"model2vec distillation, then fitted to the transformer on {len(texts)} code chunks "
                   f"(ridge towards the distilled table, lam {args.lam:g}), PCA {args.dims}"
                   + (f", SIF {args.sif:g}" if args.sif > 0 else "")),
        "training_sources": [f"{n}: {r}" for n, r, _ in default_sources()],
    }
    json.dump(manifest, open(os.path.join(args.out, "manifest.json"), "w"), indent=2)
    print(f"wrote {args.out}: {vocab} tokens x {args.dims} dims, id {manifest['id']}")


if __name__ == "__main__":
    main()
