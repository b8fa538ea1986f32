#!/usr/bin/env python3
"""Mine symbol -> defining-file tasks for the learned ranker: the lookups an agent makes
("TypeAdapter", "parse_config"), which commit messages never are.

For each repository `mine.py` mined (its tables in `--mined`), at the mirror's HEAD: the
names non-test source files declare (`class`, `struct`, `trait`, `fn`, `def`, `func` …, at
least 4 characters), declared in at most two files and written in at least `--min-users`
other files (so the defining file has rivals that use the name), at most one a file and
`--per-repo` a repository, seeded. The task is the name; the gold files are the ones
declaring it. The tree is indexed as a root commit of a scratch git directory (no history,
as an extracted tree such as semble's corpora), then `iret bench --mirrors --features`
writes one row per loop candidate, as `mine.py` does for commit tasks. Nothing mined is
committed. `train.py --docstrings DIR` trains on them beside the commit tasks and reports
them apart.

    python3 scripts/ranker/symbols.py --iret target/release/iret --out /work/cache/sym/data
"""
import argparse
import json
import random
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from docstrings import bench_tasks, is_test, stripped_commit  # noqa: E402
from mine import SOURCE, excluded_names, git_dir  # noqa: E402

# A declaration opens its line (after modifiers), so that prose ("a function that …") is not one.
DECLARES = re.compile(
    r"^[ \t]*(?:(?:pub(?:\([\w ]+\))?|public|private|protected|internal|export|default|"
    r"abstract|final|static|async|open|sealed|data|case|inline|unsafe|extern|override|"
    r"suspend|fileprivate|local)\s+)*"
    r"(?:def|fn|func|function|class|struct|enum|trait|interface|type|object|module|"
    r"protocol|fun|defmodule|defp?)\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w{3,})\b", re.M)
WORD = re.compile(r"[A-Za-z_]\w*")


def head_sources(gd, head):
    """(path, text) of HEAD's non-test source files under 300 KB that are UTF-8."""
    listing = subprocess.run(["git", f"--git-dir={gd}", "ls-tree", "-r", "-l", head],
                             capture_output=True, text=True, check=True).stdout
    wanted = []
    for line in listing.splitlines():
        meta, path = line.split("\t", 1)
        _, kind, sha, size = meta.split()
        ext = path.rsplit(".", 1)[-1].lower() if "." in path else ""
        if kind == "blob" and ext in SOURCE and size.isdigit() and int(size) < 300_000 \
                and not is_test(path):
            wanted.append((path, sha))
    cat = subprocess.Popen(["git", f"--git-dir={gd}", "cat-file", "--batch"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    for path, sha in wanted:
        cat.stdin.write(f"{sha}\n".encode())
        cat.stdin.flush()
        header = cat.stdout.readline().split()
        if len(header) < 3 or header[1] != b"blob":
            continue
        data = cat.stdout.read(int(header[2]))
        cat.stdout.read(1)
        try:
            yield path, data.decode("utf-8")
        except UnicodeDecodeError:
            continue
    cat.stdin.close()
    cat.wait()


def distinctive(name):
    """Capitalised, camelCase, snake_case or with digits: `Logger`, `parseConfig`,
    `parse_config`, not `render`."""
    return any(c.isupper() for c in name) or "_" in name.strip("_") or \
        any(c.isdigit() for c in name)


def tasks_of(sources, per_repo, min_users, seed):
    """[(name, [declaring files])]: names declared in one or two files and written in at
    least `min_users` others, at most one a declaring file, `per_repo` in all."""
    declared = defaultdict(set)
    words = {}
    for path, text in sources:
        words[path] = set(WORD.findall(text))
        for name in DECLARES.findall(text):
            declared[name].add(path)
    # A name an agent would look up, not a plain word.
    declared = {n: p for n, p in declared.items() if len(p) <= 2 and distinctive(n)}
    users = Counter(w for ws in words.values() for w in ws if w in declared)
    picked, used = [], set()
    names = sorted(n for n, p in declared.items() if users[n] - len(p) >= min_users)
    random.Random(seed).shuffle(names)
    for name in names:
        files = sorted(declared[name])
        if used & set(files):
            continue
        used |= set(files)
        picked.append((name, files))
        if len(picked) >= per_repo:
            break
    return picked


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iret", default=str(ROOT / "target/release/iret"))
    ap.add_argument("--mirrors", default="/work/.mirror")
    ap.add_argument("--mined", default="/work/cache/mine/data", help="mine.py's tables")
    ap.add_argument("--excluded", default=str(ROOT.parent / "shared/train/excluded-repos.txt"))
    ap.add_argument("--out", default="/work/cache/sym/data", help="the tables (never committed)")
    ap.add_argument("--work", default="/work/cache/sym", help="scratch mirrors, checkouts, indexes")
    ap.add_argument("--per-repo", type=int, default=40)
    ap.add_argument("--min-users", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--time-limit", type=float, default=3600)
    ap.add_argument("--only", help="comma-separated owner/name")
    a = ap.parse_args()
    excluded = excluded_names(a.excluded)
    repos = sorted(p.stem.replace("+", "/", 1) for p in Path(a.mined).glob("*.tsv"))
    if a.only:
        repos = [r for r in repos if r in a.only.split(",")]
    out, work = Path(a.out), Path(a.work)
    out.mkdir(parents=True, exist_ok=True)
    started = time.time()
    for repo in repos:
        if repo.lower() in excluded:
            print(f"symbols: {repo} is excluded: refused", file=sys.stderr)
            continue
        slug = repo.replace("/", "+", 1)
        if (out / f"{slug}.tsv").exists():
            continue
        if time.time() - started > a.time_limit:
            print("symbols: time limit reached", file=sys.stderr)
            break
        gd = git_dir(a.mirrors, repo)
        head = subprocess.run(["git", f"--git-dir={gd}", "rev-parse", "HEAD"],
                              capture_output=True, text=True).stdout.strip()
        if not head:
            continue
        tasks = tasks_of(head_sources(gd, head), a.per_repo, a.min_users, a.seed)
        if len(tasks) < 5:
            print(f"symbols: {repo}: {len(tasks)} tasks, skipped", file=sys.stderr)
            continue
        t0 = time.time()
        commit = stripped_commit(gd, work / "mirrors" / slug / "repo", head, [],
                                 message="HEAD's tree, without history")
        annotations = [{"query": n, "relevant": files, "secondary": [], "category": "symbol"}
                       for n, files in tasks]
        rows = bench_tasks(a.iret, repo, f"sym-{slug}", commit, annotations, work, out)
        if rows is not None:
            print(f"symbols: {repo}: {len(tasks)} tasks, {rows} rows, {time.time() - t0:.1f} s",
                  file=sys.stderr, flush=True)
    prov = {"command": " ".join(sys.argv), "per_repo": a.per_repo, "min_users": a.min_users,
            "seed": a.seed, "repos": sorted(p.stem for p in out.glob("*.tsv"))}
    (out / "provenance.json").write_text(json.dumps(prov, indent=1))


if __name__ == "__main__":
    main()
