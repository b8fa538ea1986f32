#!/usr/bin/env python3
"""Distil a static embedding model from the shipped transformer (the model2vec recipe).

Every token of the transformer's vocabulary is run through the model alone
(`[CLS] token [SEP]`, mean-pooled as the model pools a text); the 30,522 x 384 outputs are
reduced with PCA and weighted by an estimate of each token's frequency (SIF:
w = a / (a + p(token)), p from Zipf's law over the token id, which the WordPiece vocabulary
roughly orders by frequency). A text's static vector is then the mean of its tokens' rows:
a table lookup, no ONNX Runtime. Everything is offline: the transformer in models/ is the
only input.

  pip install numpy onnxruntime tokenizers
  scripts/distill-static.py --model models/all-minilm-l6-v2 --out models/static-minilm --dims 256 --sif 1e-4

Writes OUT/manifest.json (kind "static"), OUT/static.f16 (vocabulary x dims, little-endian
f16, row = token id) and OUT/tokenizer.json (the transformer's, copied).
"""
import argparse
import json
import os
import shutil

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer


def token_outputs(model_dir, batch=512):
    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    vocab = tok.get_vocab_size()
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    manifest = json.load(open(os.path.join(model_dir, "manifest.json")))
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = os.cpu_count() or 1
    sess = ort.InferenceSession(os.path.join(model_dir, manifest["onnx"]), opts)
    out = np.zeros((vocab, manifest["dims"]), dtype=np.float32)
    for start in range(0, vocab, batch):
        ids = np.arange(start, min(vocab, start + batch), dtype=np.int64)
        input_ids = np.stack([np.full_like(ids, cls), ids, np.full_like(ids, sep)], axis=1)
        feed = {
            "input_ids": input_ids,
            "attention_mask": np.ones_like(input_ids),
            "token_type_ids": np.zeros_like(input_ids),
        }
        hidden = sess.run(None, feed)[0]
        out[start : start + len(ids)] = hidden.mean(axis=1)
    return tok, out, manifest


def pca(x, dims, center=True):
    """x on its first `dims` principal axes (centred first unless `center` is False:
    then the axes are taken around the origin, and a row's offset is kept)."""
    centred = x - x.mean(axis=0, keepdims=True) if center else x
    # Right singular vectors of the centred matrix: the principal axes.
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    return centred @ vt[:dims].T


def sif_weights(vocab, a=1e-3):
    rank = np.arange(1, vocab + 1, dtype=np.float64)
    p = (1.0 / rank) / (1.0 / rank).sum()
    return (a / (a + p)).astype(np.float32)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="models/all-minilm-l6-v2")
    ap.add_argument("--out", default="models/static-minilm")
    ap.add_argument("--dims", type=int, default=256)
    ap.add_argument("--sif", type=float, default=1e-4, help="SIF coefficient a (0: no weighting)")
    args = ap.parse_args()
    tok, outputs, source = token_outputs(args.model)
    table = pca(outputs, args.dims)
    if args.sif > 0:
        table *= sif_weights(len(table), args.sif)[:, None]
    os.makedirs(args.out, exist_ok=True)
    table.astype("<f2").tofile(os.path.join(args.out, "static.f16"))
    shutil.copy(os.path.join(args.model, "tokenizer.json"), os.path.join(args.out, "tokenizer.json"))
    manifest = {
        "id": f"static-{source['id']}-pca{args.dims}-sif{args.sif:g}",
        "kind": "static",
        "source_model": source["id"],
        "dims": args.dims,
        "vocab": int(table.shape[0]),
        "table": "static.f16",
        "recipe": "model2vec: per-token transformer output, PCA, SIF weights by Zipf rank",
    }
    json.dump(manifest, open(os.path.join(args.out, "manifest.json"), "w"), indent=2)
    print(f"wrote {args.out}: {table.shape[0]} tokens x {args.dims} dims, id {manifest['id']}")


if __name__ == "__main__":
    main()
