#!/usr/bin/env python3
"""Compares `iret bench --json` reports: two runs query by query, or two modes of one run.

  scripts/bench-diff.py runs BEFORE.json AFTER.json [--top 10]
      How many results (query x mode) differ, the mean NDCG@10 per mode and per language in
      each file (mean of repo means, as `iret bench` reports), and the queries that moved most.
  scripts/bench-diff.py modes REPORT.json [BASE_MODE] [MODE]   (default: hybrid iterative)
      For each language: mean NDCG@10 of both modes, the difference, how many queries
      changed, and a 95% paired-bootstrap interval of the per-query difference (5,000
      resamples, fixed seed).
"""
import argparse
import collections
import json
import random
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


def runs(args):
    """Two runs of the same modes, query by query."""
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


def modes(args):
    """Two modes of one run, per language, with a paired bootstrap."""
    report = json.load(open(args.report))
    base, mode = args.base, args.mode
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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    r = sub.add_parser("runs", help="two runs of the same modes, query by query")
    r.add_argument("before")
    r.add_argument("after")
    r.add_argument("--top", type=int, default=10)
    r.set_defaults(go=runs)
    m = sub.add_parser("modes", help="two modes of one run, per language")
    m.add_argument("report")
    m.add_argument("base", nargs="?", default="hybrid")
    m.add_argument("mode", nargs="?", default="iterative")
    m.set_defaults(go=modes)
    args = ap.parse_args()
    args.go(args)


if __name__ == "__main__":
    main()
