#!/usr/bin/env python3
"""Mine ranking data from public histories: commit message -> the non-test source files it
changed, searched on the parent's tree, one row per loop candidate with iret's features.

Each repository (a git mirror fetched beside the project, `<mirrors>/<owner>+<name>/repo`) is
run through `iret bench --history` (indexed once, then updated commit by commit; the newest
`--commits` qualifying commits; subject+body and subject-alone tasks) with `--features`. What
is mined stays outside the project (`--out`); only its provenance (`provenance.json`: the
repositories, their HEAD commits, task and row counts, the command) is committed beside the
ranker.

Refuses every repository of `excluded-repos.txt` (the benchmarks' own, read from
`../shared/train/`), by name and by history: a repository sharing a root commit with an
excluded one whose mirror is present (a fork or renamed copy) is refused too.

Rerunnable: a repository whose table is complete is skipped; a time limit stops the run
between repositories (the one under way finishes or is killed at the limit, its partial
table discarded).

    python3 scripts/ranker/mine.py --iret target/release/iret --mirrors /work/.mirror \
        --out /work/cache/mine/data --commits 150 --time-limit 5400

More tasks from the same repositories, cheaply (their indexes and embedding cache are warm):
`--older-than DIR` mines, for each repository with a table in DIR, the qualifying commits
older than the oldest task there, into another `--out`; `train.py --data A --data B` reads both.

    python3 scripts/ranker/mine.py --older-than /work/cache/mine/data \
        --out /work/cache/mine/data-older --commits 150 --time-limit 5400
"""
import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCE = {
    "py", "rs", "go", "java", "kt", "kts", "scala", "rb", "js", "jsx", "mjs", "cjs", "ts",
    "tsx", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "cs", "php", "swift", "ex", "exs",
    "hs", "lua", "sh", "bash", "zig", "ml", "dart", "m", "jl", "r",
}


def git(git_dir, *args):
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], capture_output=True, text=True, check=True
    ).stdout


def git_dir(mirrors, repo):
    base = Path(mirrors) / repo.replace("/", "+", 1) / "repo"
    return base / ".git" if (base / ".git").is_dir() else base


def excluded_names(path):
    names = set()
    for line in Path(path).read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            names.add(line.lower())
    return names


def roots(gd):
    try:
        return set(git(gd, "rev-list", "--max-parents=0", "HEAD").split())
    except subprocess.CalledProcessError:
        return set()


def refused(repo, excluded, excluded_roots, gd):
    """Why `repo` may not be mined, or None."""
    if repo.lower() in excluded:
        return "listed in excluded-repos.txt"
    shared = roots(gd) & excluded_roots
    if shared:
        return f"shares root commit {sorted(shared)[0][:10]} with an excluded repository"
    return None


def language(gd):
    """The repository's most common source extension at HEAD."""
    exts = Counter()
    for path in git(gd, "ls-tree", "-r", "--name-only", "HEAD").splitlines():
        ext = path.rsplit(".", 1)[-1].lower() if "." in path else ""
        if ext in SOURCE:
            exts[ext] += 1
    return exts.most_common(1)[0][0] if exts else "?"


def oldest_task_parent(gd, table_json):
    """The first parent of the oldest commit with a task in `table_json` (an `iret bench
    --json` report of `--history` tasks, named `owner/name@HASH` or `…~subject`), or None."""
    try:
        runs = json.loads(Path(table_json).read_text()).get("runs", [])
    except (OSError, json.JSONDecodeError):
        return None
    prefixes = {r["name"].split("@", 1)[1].split("~", 1)[0] for r in runs if "@" in r["name"]}
    if not prefixes:
        return None
    chain = git(gd, "rev-list", "--first-parent", "HEAD").split()
    seen = [i for i, h in enumerate(chain) if h[:10] in prefixes]
    return f"{chain[max(seen)]}^" if seen else None


def mine_one(args, repo, gd, out_dir, deadline, until="HEAD"):
    slug = repo.replace("/", "+", 1)
    table = out_dir / f"{slug}.tsv"
    part = out_dir / f"{slug}.tsv.part"
    log = out_dir / f"{slug}.log"
    cmd = [
        args.iret, "bench", "--history", str(gd), "--commits", str(args.commits),
        "--task-text", args.task_text, "--modes", args.mode, "--until", until,
        "--corpora", str(Path(args.work) / "checkouts"),
        "--index-root", str(Path(args.work) / "indexes"),
        "--features", str(part), "--json", str(out_dir / f"{slug}.json"),
    ]
    started = time.time()
    with open(log, "w") as lf:
        try:
            subprocess.run(cmd, stdout=lf, stderr=subprocess.STDOUT, check=True,
                           timeout=max(1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            part.unlink(missing_ok=True)
            return None
        except subprocess.CalledProcessError as e:
            part.unlink(missing_ok=True)
            print(f"mine: {repo}: iret bench failed ({e.returncode}), see {log}", file=sys.stderr)
            return {"repo": repo, "error": f"exit {e.returncode}"}
    part.rename(table)
    rows = tasks = gold = 0
    seen = set()
    with open(table) as f:
        next(f)
        for line in f:
            cols = line.split("\t", 5)
            rows += 1
            gold += cols[4] == "1"
            seen.add(cols[0])
    tasks = len(seen)
    return {
        "repo": repo,
        "head": git(gd, "rev-parse", until).strip(),
        "until": until,
        "language": language(gd),
        "tasks": tasks,
        "rows": rows,
        "gold_rows": gold,
        "seconds": round(time.time() - started, 1),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iret", default=str(ROOT / "target/release/iret"))
    ap.add_argument("--mirrors", default="/work/.mirror")
    ap.add_argument("--repos", default=str(ROOT / "scripts/ranker/repos.txt"))
    ap.add_argument("--excluded", default=str(ROOT.parent / "shared/train/excluded-repos.txt"))
    ap.add_argument("--out", default="/work/cache/mine/data", help="the tables (never committed)")
    ap.add_argument("--work", default="/work/cache/mine", help="checkouts and indexes")
    ap.add_argument("--commits", type=int, default=150, help="tasks per repository (per text)")
    ap.add_argument("--task-text", default="both", choices=["full", "subject", "both"])
    ap.add_argument("--time-limit", type=float, default=3600, help="seconds for the whole run")
    ap.add_argument("--only", help="comma-separated owner/name: mine just these")
    ap.add_argument("--mode", default="iterative",
                    help="the bench mode whose candidates are written (iterative-tuned: queries "
                         "through the query map, for a ranker over its dense features)")
    ap.add_argument("--older-than", metavar="DIR",
                    help="mine the commits older than the oldest task of each repository's "
                         "table in DIR (repositories without one there are skipped)")
    args = ap.parse_args()
    if args.older_than and Path(args.older_than).resolve() == Path(args.out).resolve():
        sys.exit("mine: --older-than needs another --out than the tables it extends")

    deadline = time.time() + args.time_limit
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    if not Path(args.excluded).is_file():
        sys.exit(f"mine: {args.excluded} not found: the excluded repositories must be known")
    excluded = excluded_names(args.excluded)
    excluded_roots = set()
    for name in excluded:
        for d in Path(args.mirrors).glob("*"):
            if d.name.lower() == name.replace("/", "+", 1):
                excluded_roots |= roots(git_dir(args.mirrors, d.name.replace("+", "/", 1)))
    repos = [r.split()[0] for r in Path(args.repos).read_text().splitlines()
             if r.strip() and not r.startswith("#")]
    if args.only:
        repos = [r for r in repos if r in args.only.split(",")]
    # Smallest first: many repositories early, the large ones as time allows.
    sized = []
    for repo in repos:
        gd = git_dir(args.mirrors, repo)
        if not gd.is_dir():
            print(f"mine: {repo}: no mirror at {gd}, skipped", file=sys.stderr)
            continue
        why = refused(repo, excluded, excluded_roots, gd)
        if why:
            print(f"mine: {repo}: refused ({why})", file=sys.stderr)
            continue
        files = len(git(gd, "ls-tree", "-r", "--name-only", "HEAD").splitlines())
        sized.append((files, repo, gd))
    sized.sort()

    prov_path = out_dir / "provenance.json"
    prov = json.loads(prov_path.read_text()) if prov_path.exists() else {"repos": {}}
    prov["command"] = " ".join(["scripts/ranker/mine.py"] + sys.argv[1:])
    prov["commits_per_repo"] = args.commits
    prov["task_text"] = args.task_text
    for files, repo, gd in sized:
        slug = repo.replace("/", "+", 1)
        if (out_dir / f"{slug}.tsv").exists() and repo in prov["repos"]:
            continue
        if time.time() >= deadline:
            print("mine: time limit reached", file=sys.stderr)
            break
        until = "HEAD"
        if args.older_than:
            until = oldest_task_parent(gd, Path(args.older_than) / f"{slug}.json")
            if until is None:
                continue
        print(f"mine: {repo} ({files} files, until {until})", file=sys.stderr, flush=True)
        got = mine_one(args, repo, gd, out_dir, deadline, until)
        if got is None:
            print(f"mine: {repo}: stopped at the time limit", file=sys.stderr)
            break
        prov["repos"][repo] = got
        tmp = prov_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(prov, indent=1, sort_keys=True))
        os.replace(tmp, prov_path)
        print(f"mine: {repo}: {got.get('tasks', 0)} tasks, {got.get('rows', 0)} rows, "
              f"{got.get('seconds', 0)} s", file=sys.stderr, flush=True)
    done = [r for r in prov["repos"].values() if "tasks" in r]
    print(f"mine: {len(done)} repositories, {sum(r['tasks'] for r in done)} tasks, "
          f"{len({r['language'] for r in done})} languages", file=sys.stderr)


if __name__ == "__main__":
    main()
