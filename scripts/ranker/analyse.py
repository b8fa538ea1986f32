#!/usr/bin/env python3
"""Two readings of the mined set behind figures in BENCHMARKS.md.

`same-tasks FOLDER OOF.npz ...`: runs of `train.py --save-oof` (held out by repository)
compared on the tasks of one mined folder only, e.g. whether more tasks of the same
repositories lift the figures on the tasks that were there before:

    python3 scripts/ranker/analyse.py same-tasks /work/cache/mine/data A.npz B.npz

`later-cycles DATA ...`: how many tasks have a gold file that the loop's later cycles
lifted (`later_gain` above 0.05) or that cycle 1 did not find (`dispatch_rank` missing):
what commit tasks can teach a ranker about refine.

    python3 scripts/ranker/analyse.py later-cycles /work/cache/mine/snap28
"""
import argparse
import json
from pathlib import Path

import numpy as np

import train as T


def task_names(folder):
    names = set()
    for path in Path(folder).glob("*.json"):
        if path.name != "provenance.json":
            names |= {r["name"] for r in json.loads(path.read_text()).get("runs", [])}
    return names


def same_tasks(folder, runs):
    names = task_names(folder)
    for run in runs:
        d = np.load(run, allow_pickle=True)
        tasks, y, gold = d["task"], d["label"], d["gold"]
        groups = T.groups_of(tasks)
        idx = [i for i, (a, _) in enumerate(groups) if tasks[a] in names]
        g, c = [groups[i] for i in idx], [int(gold[i]) for i in idx]
        print(f"{run}: learned {T.metrics(g, y, d['learned'], c)}, "
              f"rules {T.metrics(g, y, d['rules'], c)}")


def later_cycles(data):
    X, y, tasks, _, names = T.load(data)
    gain, rank = X[:, names.index("later_gain")], X[:, names.index("dispatch_rank")]
    kinds = {}
    for a, b in T.groups_of(tasks):
        gold = np.flatnonzero(y[a:b]) + a
        if not len(gold):
            kind = "no gold candidate"
        elif np.all(np.isnan(rank[gold])):
            kind = "gold not in cycle 1"
        elif np.nanmax(gain[gold]) > 0.05:
            kind = "gold lifted by a later cycle"
        else:
            kind = "gold found in cycle 1, not lifted"
        kinds[kind] = kinds.get(kind, 0) + 1
    for kind, n in sorted(kinds.items(), key=lambda kv: -kv[1]):
        print(f"{n:7}  {kind}")
    print(f"{sum(kinds.values()):7}  tasks")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    s = sub.add_parser("same-tasks")
    s.add_argument("folder")
    s.add_argument("runs", nargs="+")
    s = sub.add_parser("later-cycles")
    s.add_argument("data", nargs="+")
    a = ap.parse_args()
    if a.what == "same-tasks":
        same_tasks(a.folder, a.runs)
    else:
        later_cycles(a.data)


if __name__ == "__main__":
    main()
