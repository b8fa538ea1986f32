#!/usr/bin/env python3
"""The query map measured through iret itself on repositories it was not trained on:
`train.py --hold-out-fold K` lists them (heldout.txt); each is run through
`iret bench --history` (the same commits and task texts as mined, on the parent's tree,
the whole index searched) with the vector leg alone (every ranking signal off), the dense
mode, and both again through the map. Prints Recall@10 and Acc@k per mode over all tasks.

    python3 scripts/encoder/heldout.py --map MAP --mirrors MIRRORS --work WORK --out OUT
"""
import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "training"))
from iret_training import repos as mine  # noqa: E402  (git_dir, Excluded)

# The vector leg alone: `dense` with every ranking signal switched off.
RAW = ("@def=0+name=0+spell=0+path=0+noise=1+coh=0+men=0+rai=0+msg=0+api=0+tb=0"
       "+hm=0+hs=0+hf=0+hr=0+hj=0+stvw=0")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iret", default=str(ROOT / "target/release/iret"))
    ap.add_argument("--map", required=True, help="a folder train.py --hold-out-fold wrote")
    ap.add_argument("--mirrors", required=True, help="git mirrors, <owner>+<name>/repo")
    ap.add_argument("--work", required=True, help="the mining checkouts and indexes")
    ap.add_argument("--out", required=True)
    ap.add_argument("--modes", default=f"dense{RAW},dense-tuned{RAW},dense,dense-tuned")
    args = ap.parse_args()
    repos = Path(args.map, "heldout.txt").read_text().split()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, IRET_QUERY_MAP_DIR=str(Path(args.map).resolve()))
    tally = {}
    for repo in repos:
        slug = repo.replace("/", "+", 1)
        js = out / f"{slug}.json"
        cmd = [args.iret, "bench", "--history", str(mine.git_dir(args.mirrors, repo)),
               "--commits", "150", "--task-text", "both", "--modes", args.modes,
               "--corpora", f"{args.work}/checkouts", "--index-root", f"{args.work}/indexes",
               "--json", str(js)]
        with open(out / f"{slug}.log", "w") as log:
            if subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=env).returncode:
                print(f"heldout: {repo} failed, see {out / slug}.log", file=sys.stderr)
                continue
        for run in json.loads(js.read_text())["runs"]:
            gold = set(run["gold"])
            for r in run["results"]:
                t = tally.setdefault(r["mode"], {"n": 0, "recall10": 0.0, "acc1": 0, "acc5": 0, "acc10": 0})
                t["n"] += 1
                t["recall10"] += len(gold & set(r["files"][:10])) / len(gold)
                rank = r["rank"] or 10**9
                t["acc1"] += rank <= 1
                t["acc5"] += rank <= 5
                t["acc10"] += rank <= 10
        print(f"heldout: {repo} done", file=sys.stderr, flush=True)
    for mode, t in tally.items():
        n = t["n"]
        print(f"{mode.split('@')[0] + (' (vector leg alone)' if '@' in mode else ''):40} n {n:5}  "
              f"Recall@10 {100 * t['recall10'] / n:5.1f}  Acc@1 {100 * t['acc1'] / n:5.1f}  "
              f"Acc@5 {100 * t['acc5'] / n:5.1f}  Acc@10 {100 * t['acc10'] / n:5.1f}")


if __name__ == "__main__":
    main()
