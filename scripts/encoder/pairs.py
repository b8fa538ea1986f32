#!/usr/bin/env python3
"""Query-encoder training pairs from the histories the ranker's data was mined from.

For each repository `the training tool's `mine`` mined (its `provenance.json`), runs
`iret bench --history ... --modes dense --pairs` over the same commits and task texts, on
the same checkouts and indexes (so nothing is embedded again): per task, its text and
vector, its gold files, and the chunks of the parent's tree a trained query must tell
apart (`crates/iret-bench/src/pairs.rs`). The refusals of mine.py hold here too: a
repository of `excluded-repos.txt`, or one sharing its root commit, is never read.

What it writes stays outside the project (`--out`); `scripts/encoder/train.py` reads it.
Rerunnable: a repository whose pairs are complete is skipped; a time limit stops the run
between repositories.

    python3 scripts/encoder/pairs.py --time-limit 5400
"""
import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "training"))
from iret_training import repos as mine  # noqa: E402  (git_dir, Excluded)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iret", default=str(ROOT / "target/release/iret"))
    ap.add_argument("--mirrors", required=True, help="git mirrors, <owner>+<name>/repo")
    ap.add_argument("--mined", required=True, help="the training tool's mined data folder")
    ap.add_argument("--work", required=True, help="the mining checkouts and indexes")
    ap.add_argument("--excluded", default=str(ROOT.parent / "shared/train/excluded-repos.txt"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--time-limit", type=float, default=3600)
    ap.add_argument("--only", help="comma-separated owner/name")
    ap.add_argument("--docstrings", help="instead: the datasets the former scripts/ranker/docstrings.py (git history) wrote "
                    "(its --work folder: datasets/, mirrors/, checkouts/, idx/), docstring -> "
                    "defining-file tasks on the tree with the docstrings removed")
    args = ap.parse_args()
    if args.docstrings:
        return docstring_pairs(args)

    deadline = time.time() + args.time_limit
    if not Path(args.excluded).is_file():
        sys.exit(f"pairs: {args.excluded} not found: the excluded repositories must be known")
    excluded = mine.Excluded(args.excluded)
    prov = json.loads((Path(args.mined) / "provenance.json").read_text())
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    repos = sorted(r for r, v in prov["repos"].items() if v.get("tasks"))
    if args.only:
        repos = [r for r in repos if r in args.only.split(",")]
    done = {}
    for repo in repos:
        slug = repo.replace("/", "+", 1)
        final = out / f"{slug}.jsonl"
        if final.exists() and (out / f"{slug}.jsonl.vec").exists():
            continue
        gd = mine.git_dir(args.mirrors, repo)
        why = excluded.refused(repo, gd)
        if why:
            print(f"pairs: {repo}: refused ({why})", file=sys.stderr)
            continue
        if time.time() >= deadline:
            print("pairs: time limit reached", file=sys.stderr)
            break
        part = out / f"{slug}.part.jsonl"
        cmd = [
            args.iret, "bench", "--history", str(gd),
            "--commits", str(prov.get("commits_per_repo", 150)),
            "--task-text", prov.get("task_text", "both"), "--modes", "dense",
            "--corpora", str(Path(args.work) / "checkouts"),
            "--index-root", str(Path(args.work) / "indexes"),
            "--pairs", str(part),
        ]
        started = time.time()
        with open(out / f"{slug}.log", "w") as lf:
            try:
                subprocess.run(cmd, stdout=lf, stderr=subprocess.STDOUT, check=True,
                               timeout=max(1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                print(f"pairs: {repo}: stopped at the time limit", file=sys.stderr)
                break
            except subprocess.CalledProcessError as e:
                print(f"pairs: {repo}: failed ({e.returncode})", file=sys.stderr)
                continue
        os.replace(f"{part}.vec", out / f"{slug}.jsonl.vec")
        os.replace(part, final)
        n = sum(1 for _ in open(final))
        done[repo] = n
        print(f"pairs: {repo}: {n} tasks, {time.time() - started:.0f} s", file=sys.stderr,
              flush=True)
    print(f"pairs: {len(done)} repositories this run", file=sys.stderr)


def docstring_pairs(args):
    work, out = Path(args.docstrings), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    deadline = time.time() + args.time_limit
    excluded = mine.Excluded(args.excluded)
    for ds in sorted((work / "datasets").iterdir()):
        slug = ds.name
        if excluded.refused(slug.replace("+", "/", 1)):
            print(f"pairs: {slug}: refused (listed in excluded-repos.txt)", file=sys.stderr)
            continue
        final = out / f"doc-{slug}.jsonl"
        if final.exists() or time.time() >= deadline:
            continue
        part = out / f"doc-{slug}.part.jsonl"
        cmd = [args.iret, "bench", "--dataset", str(ds), "--mirrors", str(work / "mirrors"),
               "--corpora", str(work / "checkouts"), "--index-root", str(work / "idx"),
               "--modes", "dense", "--pairs", str(part)]
        with open(out / f"doc-{slug}.log", "w") as lf:
            if subprocess.run(cmd, stdout=lf, stderr=subprocess.STDOUT).returncode:
                print(f"pairs: {slug}: failed", file=sys.stderr)
                continue
        os.replace(f"{part}.vec", f"{final}.vec")
        os.replace(part, final)
        print(f"pairs: docstrings of {slug}: {sum(1 for _ in open(final))} tasks", file=sys.stderr,
              flush=True)


if __name__ == "__main__":
    main()
