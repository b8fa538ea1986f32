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
import json
import random
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from docstrings import bench_tasks, head_sources, mined_heads, stripped_commit, \
    synthetic_parser  # noqa: E402

# A declaration opens its line (after modifiers), so that prose ("a function that …") is not one.
DECLARES = re.compile(
    r"^[ \t]*(?:(?:pub(?:\([\w ]+\))?|public|private|protected|internal|export|default|"
    r"abstract|final|static|async|open|sealed|data|case|inline|unsafe|extern|override|"
    r"suspend|fileprivate|local)\s+)*"
    r"(?:def|fn|func|function|class|struct|enum|trait|interface|type|object|module|"
    r"protocol|fun|defmodule|defp?)\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w{3,})\b", re.M)
WORD = re.compile(r"[A-Za-z_]\w*")


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
    ap = synthetic_parser(__doc__.split("\n\n")[0], "/work/cache/sym/data", "/work/cache/sym", 40)
    ap.add_argument("--min-users", type=int, default=3)
    a = ap.parse_args()
    out, work = Path(a.out), Path(a.work)
    for repo, slug, gd, head in mined_heads(a, "symbols"):
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
