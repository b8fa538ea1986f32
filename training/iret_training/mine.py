"""`mine`: commit tasks from public histories. For each repository of the list (a git mirror
under `--mirrors`), the newest `--commits` qualifying commits (a descriptive message; gold: the
non-test source files it changed, searched on the parent's tree) run through the loop by
`iret bench --history --features`: one row per candidate, in `<data>/tables/commit/`.
Repositories are taken smallest first; a complete table is kept; the time limit stops the run
between repositories (the one under way is stopped at the limit, its table discarded)."""
import json
import os
import sys
import time
from pathlib import Path

from . import bench
from .repos import Excluded, git, git_dir, language, slug
from .tables import tables_dir

REPOS = Path(__file__).with_name("repos.txt")


def add_arguments(ap):
    ap.add_argument("--repos", default=str(REPOS),
                    help="the repositories to mine, one owner/name a line (default: the list "
                         "shipped with the tool)")
    ap.add_argument("--only", help="comma-separated owner/name: mine just these")
    ap.add_argument("--commits", type=int, default=150, help="tasks per repository")
    ap.add_argument("--task-text", default="both", choices=["full", "subject", "both"],
                    help="a task's text: the commit's subject and body, its subject, or both "
                         "as two tasks")
    ap.add_argument("--older-than", action="store_true",
                    help="mine the commits older than the oldest task of each repository's "
                         "table, into <data>/tables/commit/<slug>.older.tsv")


def oldest_task_parent(gd, report):
    """The first parent of the oldest commit with a task in a bench report, or None."""
    try:
        runs = json.loads(Path(report).read_text()).get("runs", [])
    except (OSError, json.JSONDecodeError):
        return None
    prefixes = {r["name"].split("@", 1)[1].split("~", 1)[0] for r in runs if "@" in r["name"]}
    chain = git(gd, "rev-list", "--first-parent", "HEAD").split()
    seen = [i for i, h in enumerate(chain) if h[:10] in prefixes]
    return f"{chain[max(seen)]}^" if seen else None


def run(a):
    until_time = bench.deadline(a.time_limit)
    out = tables_dir(a.data, "commit")
    out.mkdir(parents=True, exist_ok=True)
    work = Path(a.data) / "work" / "mine"
    excluded = Excluded(a.excluded, a.mirrors)
    repos = [r.split()[0] for r in Path(a.repos).read_text().splitlines()
             if r.strip() and not r.startswith("#")]
    if a.only:
        repos = [r for r in repos if r in a.only.split(",")]
    sized = []
    for repo in repos:
        gd = git_dir(a.mirrors, repo)
        if not (gd / "HEAD").exists():
            print(f"mine: {repo}: no mirror at {gd}, skipped", file=sys.stderr)
            continue
        why = excluded.refused(repo, gd)
        if why:
            print(f"mine: {repo}: refused ({why})", file=sys.stderr)
            continue
        sized.append((len(git(gd, "ls-tree", "-r", "--name-only", "HEAD").splitlines()), repo, gd))
    sized.sort()
    prov_path = out / "provenance.json"
    prov = json.loads(prov_path.read_text()) if prov_path.exists() else {"repos": {}}
    prov["command"] = "iret-train mine " + " ".join(sys.argv[2:])
    prov["excluded_checked"] = str(excluded.path.name)
    for files, repo, gd in sized:
        name = slug(repo) + (".older" if a.older_than else "")
        table = out / f"{name}.tsv"
        if table.exists() and name in prov["repos"]:
            continue
        if time.time() >= until_time:
            print("mine: time limit reached", file=sys.stderr)
            break
        until = "HEAD"
        if a.older_than:
            until = oldest_task_parent(gd, out / f"{slug(repo)}.json")
            if until is None:
                continue
        print(f"mine: {repo} ({files} files, until {until})", file=sys.stderr, flush=True)
        started = time.time()
        rows = bench.run(a.iret, [
            "--history", gd, "--commits", a.commits, "--task-text", a.task_text,
            "--modes", "iterative", "--until", until, "--corpora", work / "checkouts",
            "--index-root", work / "indexes"], table, log=out / f"{name}.log",
            timeout=bench.left(until_time))
        if rows is None:
            continue
        with open(table) as f:
            next(f)
            tasks = len({line.split("\t", 1)[0] for line in f})
        prov["repos"][name] = {"repo": repo, "head": git(gd, "rev-parse", until).strip(),
                               "language": language(gd), "tasks": tasks, "rows": rows,
                               "seconds": round(time.time() - started, 1)}
        tmp = prov_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(prov, indent=1, sort_keys=True))
        os.replace(tmp, prov_path)
        print(f"mine: {repo}: {tasks} tasks, {rows} rows, {time.time() - started:.0f} s",
              file=sys.stderr, flush=True)
    done = prov["repos"].values()
    print(f"mine: {len(done)} tables, {sum(r['tasks'] for r in done)} tasks", file=sys.stderr)
