#!/usr/bin/env python3
"""Compares two modes of an `iret bench --json` report, per language.

    scripts/bench-compare.py REPORT.json [BASE_MODE] [MODE]   (default: hybrid iterative)

For each language: mean NDCG@10 of both modes (mean of repo means, as `iret bench`
prints), the difference, how many queries changed, and a 95% paired-bootstrap interval of
the per-query difference (5,000 resamples, fixed seed).
"""
import collections
import json
import random
import sys


def main():
    report = json.load(open(sys.argv[1]))
    base = sys.argv[2] if len(sys.argv) > 2 else "hybrid"
    mode = sys.argv[3] if len(sys.argv) > 3 else "iterative"
    repo_means = collections.defaultdict(lambda: collections.defaultdict(list))
    diffs = collections.defaultdict(list)
    for run in report["runs"]:
        by_query = collections.defaultdict(dict)
        for r in run["results"]:
            by_query[r["query"]][r["mode"]] = r["ndcg10"]
        for m in (base, mode):
            vals = [v[m] for v in by_query.values()]
            repo_means[run["language"]][m].append(sum(vals) / len(vals))
        diffs[run["language"]].extend(v[mode] - v[base] for v in by_query.values())
    rng = random.Random(1)
    print(f"{'language':12} {base:>10} {mode:>10}   diff  changed  95% CI of per-query diff")
    overall = collections.defaultdict(list)
    for lang in sorted(repo_means):
        m = {k: sum(v) / len(v) for k, v in repo_means[lang].items()}
        for k, v in repo_means[lang].items():
            overall[k].extend(v)
        d = diffs[lang]
        n = len(d)
        boot = sorted(sum(rng.choice(d) for _ in range(n)) / n for _ in range(5000))
        changed = sum(1 for x in d if abs(x) > 1e-9)
        flag = " <" if m[mode] < m[base] - 1e-9 else ""
        print(
            f"{lang:12} {m[base]:10.4f} {m[mode]:10.4f} {m[mode] - m[base]:+.4f} {changed:4d}/{n:<4d}"
            f" [{boot[125]:+.4f}, {boot[4875]:+.4f}]{flag}"
        )
    o = {k: sum(v) / len(v) for k, v in overall.items()}
    print(f"{'all repos':12} {o[base]:10.4f} {o[mode]:10.4f} {o[mode] - o[base]:+.4f}")


if __name__ == "__main__":
    main()
