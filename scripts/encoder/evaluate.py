#!/usr/bin/env python3
"""The dense leg alone, shipped against a query map, on pairs `iret bench --pairs` wrote
(a mined history, or a localisation dataset such as SWE-bench dev): per task, the files of
its pool ranked by their best chunk's cosine; Recall@10, Acc@1 and Acc@5, per repository.

    python3 scripts/encoder/evaluate.py --pairs PAIRS --map models/query-map
"""
import argparse
import importlib.util
import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("train", HERE / "train.py")
train = importlib.util.module_from_spec(spec)
spec.loader.exec_module(train)


def read_map(folder):
    m = json.loads((Path(folder) / "manifest.json").read_text())
    d = m["dims"]
    blob = np.fromfile(Path(folder) / "map.bin", dtype="<f4")
    return blob[: d * d].reshape(d, d), blob[d * d:]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", required=True, help="a folder of NAME.jsonl + NAME.jsonl.vec")
    ap.add_argument("--map", action="append", required=True, help="a query-map folder (repeatable)")
    args = ap.parse_args()
    mat_of, repos = train.load(args.pairs)
    dims = next(iter(mat_of.values())).shape[1]
    maps = {"shipped": (np.eye(dims, dtype=np.float32), np.zeros(dims, dtype=np.float32))}
    for folder in args.map:
        maps[folder] = read_map(folder)
    every = [t for ts in repos.values() for t in ts]
    for name, (W, b) in maps.items():
        print(f"{name}: all {train.metrics(mat_of, every, W, b)}")
        for r, ts in sorted(repos.items()):
            print(f"  {r}: {train.metrics(mat_of, ts, W, b)}")


if __name__ == "__main__":
    main()
