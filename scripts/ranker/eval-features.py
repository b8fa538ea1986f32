#!/usr/bin/env python3
"""Offline: a ranker folder's order over an `iret bench --features` table (e.g. SWE-bench
dev's), beside the rules' order, without rebuilding iret: Acc@1/3/5/10 and NDCG@10 over
tasks, and Acc@1 per repository. For the shipped model it gives the online run's figures.

    python3 scripts/ranker/eval-features.py FEATURES.tsv MODEL_DIR [BENCH.json]

BENCH.json (the bench's `--json`) gives each task's number of gold files; without it, one.
"""
import json
import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort

sys.path.insert(0, str(Path(__file__).resolve().parent))
import train as T  # noqa: E402

table, model = sys.argv[1], sys.argv[2]
gold_json = sys.argv[3] if len(sys.argv) > 3 else None
feats, y, tasks, repos = [], [], [], []
with open(table) as f:
    names = f.readline().rstrip("\n").split("\t")[len(T.FIXED):]
    for line in f:
        p = line.rstrip("\n").split("\t")
        if p[2] != "iterative":
            continue
        tasks.append(p[0])
        repos.append(p[1])
        y.append(int(p[4]))
        feats.append([float(x) for x in p[len(T.FIXED):]])
X = np.asarray(feats, dtype=np.float32)
y = np.asarray(y)
tasks = np.asarray(tasks)
groups = T.groups_of(tasks)
gold = [1] * len(groups)
if gold_json:
    counts = {r["name"]: len(r["gold"]) for r in json.load(open(gold_json))["runs"]}
    gold = [counts.get(tasks[a], 1) for a, _ in groups]
session = ort.InferenceSession(str(Path(model) / "ranker.onnx"), providers=["CPUExecutionProvider"])
score = session.run(None, {"features": X})[0].reshape(-1)
manifest = json.loads((Path(model) / "manifest.json").read_text())
if manifest.get("base"):
    b = manifest["base"]
    score = score + b["weight"] * np.nan_to_num(X[:, names.index(b["feature"])])
rules = -X[:, names.index("rules_rank")]
print("rules  ", T.metrics(groups, y, rules, gold))
print("learned", T.metrics(groups, y, score, gold))
for repo in sorted(set(repos)):
    idx = [i for i, (a, _) in enumerate(groups) if repos[a] == repo]
    g = [groups[i] for i in idx]
    c = [gold[i] for i in idx]
    print(f"  {repo} rules {T.metrics(g, y, rules, c)['acc@1']} "
          f"learned {T.metrics(g, y, score, c)['acc@1']} ({len(idx)} tasks)")
