#!/usr/bin/env python3
"""Compare two `iret bench --json` files query by query.

Prints how many results (query × mode) differ, the mean NDCG@10 per mode and per language
in each file (mean of repo means, as `iret bench` reports), and the queries that moved most.

Usage: scripts/compare-bench.py BEFORE.json AFTER.json [--top 10]
"""
import argparse
import json
import statistics
from collections import defaultdict


def load(path):
    doc = json.load(open(path))
    results, language = {}, {}
    for run in doc["runs"]:
        language[run["name"]] = run["language"]
        seen = defaultdict(int)
        for q in run["results"]:
            # A repo may ask the same query twice (two annotations): keep both.
            n = seen[(q["query"], q["mode"])]
            seen[(q["query"], q["mode"])] += 1
            query = q["query"] if n == 0 else f"{q['query']} #{n + 1}"
            results[(run["name"], query, q["mode"])] = q["ndcg10"]
    return results, language


def means(results, language, keys):
    by = defaultdict(lambda: defaultdict(list))
    for repo, query, mode in keys:
        by[(mode, language[repo])][repo].append(results[(repo, query, mode)])
    out = defaultdict(dict)
    for (mode, lang), repos in by.items():
        out[mode][lang] = statistics.mean(statistics.mean(v) for v in repos.values())
    overall = {}
    for mode in out:
        repos = defaultdict(list)
        for repo, query, m in keys:
            if m == mode:
                repos[repo].append(results[(repo, query, m)])
        overall[mode] = statistics.mean(statistics.mean(v) for v in repos.values())
    return out, overall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--top", type=int, default=10)
    args = ap.parse_args()
    a, lang = load(args.before)
    b, lang_b = load(args.after)
    lang.update(lang_b)
    shared = sorted(k for k in a if k in b)
    moved = [(b[k] - a[k], k) for k in shared if abs(b[k] - a[k]) > 1e-9]
    print(f"{len(shared)} results in both files, {len(moved)} differ")
    la, oa = means(a, lang, shared)
    lb, ob = means(b, lang, shared)
    for mode in sorted(oa):
        print(f"\n{mode}: mean {oa[mode]:.4f} -> {ob[mode]:.4f} ({ob[mode] - oa[mode]:+.4f})")
        for l in sorted(la[mode]):
            d = lb[mode][l] - la[mode][l]
            mark = "" if abs(d) < 5e-5 else f"  {d:+.4f}"
            print(f"  {l:12s} {la[mode][l]:.4f} -> {lb[mode][l]:.4f}{mark}")
    if moved:
        print("\nmoved most:")
        for d, (repo, query, mode) in sorted(moved, key=lambda x: -abs(x[0]))[: args.top]:
            print(f"  {d:+.3f} {mode:9s} {repo}: {query[:80]}")


if __name__ == "__main__":
    main()
