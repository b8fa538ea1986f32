#!/usr/bin/env python3
"""Summarise the progress lines of `iret bench --mirrors/--history` (one line per instance:
`iret bench: NAME (update S s, N changed): rank MODE R, MODE R, ...`), for a run that was
stopped before it wrote its JSON, or to merge the logs of runs over different repositories.

Usage: scripts/loc-log-summary.py LOG [LOG ...] [--modes hybrid,iterative] [--latency JSON ...]

Acc@k: share of instances whose gold files are all within rank k. NDCG@10 is exact for
single-gold instances (1/log2(1+rank)); for several gold files it is not computable from a
rank alone and is left out.
"""
import argparse
import math
import re
import statistics
import sys

LINE = re.compile(r"^iret bench: (\S+) \(update ([\d.]+)s, (\d+) changed\): rank (.*)$")


def parse(paths):
    runs = {}
    for path in paths:
        for line in open(path, encoding="utf-8", errors="replace"):
            m = LINE.match(line.strip())
            if not m:
                continue
            name, update, _, ranks = m.groups()
            by_mode = {}
            for part in ranks.split(", "):
                mode, _, r = part.rpartition(" ")
                by_mode[mode] = None if r == "-" else int(r)
            runs[name] = (float(update), by_mode)
    return runs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("logs", nargs="+")
    ap.add_argument("--modes")
    ap.add_argument("--latency", nargs="+", metavar="JSON",
                    help="the --json files of the same runs: per-mode query latency p50/p95 over all")
    args = ap.parse_args()
    runs = parse(args.logs)
    if not runs:
        sys.exit("no progress lines found")
    modes = args.modes.split(",") if args.modes else list(next(iter(runs.values()))[1])
    print(f"{'mode':<34} {'n':>4} {'Acc@1':>6} {'Acc@3':>6} {'Acc@5':>6} {'Acc@10':>6} {'NDCG@10':>8}")
    for mode in modes:
        ranks = [r[1].get(mode) for r in runs.values() if mode in r[1]]
        n = len(ranks)
        if n == 0:
            continue
        acc = lambda k: 100.0 * sum(1 for r in ranks if r is not None and r <= k) / n
        ndcg = sum(1 / math.log2(1 + r) for r in ranks if r is not None and r <= 10) / n
        print(f"{mode:<34} {n:>4} {acc(1):>6.1f} {acc(3):>6.1f} {acc(5):>6.1f} {acc(10):>6.1f} {ndcg:>8.4f}")
    if args.latency:
        print_latency(args.latency, modes)
    ups = sorted(u for u, _ in runs.values())
    print(f"index update per hop: median {statistics.median(ups):.2f} s, max {ups[-1]:.2f} s "
          f"({len(ups)} hops)")


def print_latency(paths, modes):
    """p50/p95 of the per-query latency the benchmark recorded (its --json `runs`)."""
    import json
    by_mode = {}
    for path in paths:
        for run in json.load(open(path))["runs"]:
            for res in run["results"]:
                by_mode.setdefault(res["mode"], []).append(res["latency_ms"])
    for mode in modes:
        v = sorted(by_mode.get(mode, []))
        if v:
            p95 = v[int(0.95 * (len(v) - 1))]
            print(f"latency {mode}: n {len(v)}, p50 {statistics.median(v):.1f} ms, p95 {p95:.1f} ms")


if __name__ == "__main__":
    main()
