"""`symbols`: symbol lookups, the tasks an agent makes ("TypeAdapter", "parse_config") and
commit messages never are. For each repository with a commit table, at its mirror's HEAD: names
non-test source files declare (`class`, `struct`, `fn`, `def`, `func` ..., 4 characters or more,
capitalised, camelCase, snake_case or with digits), declared in at most two files and written in
at least `--min-users` others; at most one a file and `--per-repo` a repository, seeded. Gold:
the declaring files. The tree is indexed as the root commit of a scratch git directory (no
history, as an extracted tree), then run through the loop by `iret bench --mirrors --features`."""
import json
import os
import random
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

from . import bench
from .repos import Excluded, git_dir, head_sources, slug
from .tables import tables_dir

# A declaration opens its line (after modifiers), so that prose ("a function that ...") is not one.
DECLARES = re.compile(
    r"^[ \t]*(?:(?:pub(?:\([\w ]+\))?|public|private|protected|internal|export|default|"
    r"abstract|final|static|async|open|sealed|data|case|inline|unsafe|extern|override|"
    r"suspend|fileprivate|local)\s+)*"
    r"(?:def|fn|func|function|class|struct|enum|trait|interface|type|object|module|"
    r"protocol|fun|defmodule|defp?)\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w{3,})\b", re.M)
WORD = re.compile(r"[A-Za-z_]\w*")


def add_arguments(ap):
    ap.add_argument("--per-repo", type=int, default=40)
    ap.add_argument("--min-users", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--only", help="comma-separated owner/name")


def distinctive(name):
    """`Logger`, `parseConfig`, `parse_config`, `utf8`; not `render`."""
    return any(c.isupper() for c in name) or "_" in name.strip("_") or \
        any(c.isdigit() for c in name)


def tasks_of(sources, per_repo, min_users, seed):
    """[(name, [declaring files])]."""
    declared = defaultdict(set)
    words = {}
    for path, text in sources:
        words[path] = set(WORD.findall(text))
        for name in DECLARES.findall(text):
            declared[name].add(path)
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


def root_commit(mirror_gd, scratch, head):
    """A root commit of `head`'s tree in the bare git directory `scratch` (objects borrowed
    from the mirror): the tree without its history. Its id."""
    scratch.mkdir(parents=True, exist_ok=True)
    g = ["git", f"--git-dir={scratch}"]
    if not (scratch / "HEAD").exists():
        subprocess.run(["git", "init", "-q", "--bare", str(scratch)], check=True)
    alt = scratch / "objects/info/alternates"
    alt.parent.mkdir(parents=True, exist_ok=True)
    alt.write_text(str(Path(mirror_gd).resolve() / "objects") + "\n")
    tree = subprocess.run(["git", f"--git-dir={mirror_gd}", "rev-parse", f"{head}^{{tree}}"],
                          capture_output=True, text=True, check=True).stdout.strip()
    date = subprocess.run(["git", f"--git-dir={mirror_gd}", "log", "-1", "--format=%cI", head],
                          capture_output=True, text=True, check=True).stdout.strip()
    env = dict(os.environ, GIT_AUTHOR_NAME="iret", GIT_AUTHOR_EMAIL="iret@localhost",
               GIT_COMMITTER_NAME="iret", GIT_COMMITTER_EMAIL="iret@localhost",
               GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    commit = subprocess.run(g + ["commit-tree", tree, "-m", "HEAD's tree, without history"],
                            env=env, capture_output=True, text=True, check=True).stdout.strip()
    subprocess.run(g + ["update-ref", "refs/heads/main", commit], check=True)
    subprocess.run(g + ["symbolic-ref", "HEAD", "refs/heads/main"], check=True)
    return commit


def dataset(folder, repo, name, commit, annotations):
    """A one-repository localisation dataset (semble's format with a `repo` and `revision`)."""
    (folder / "annotations").mkdir(parents=True, exist_ok=True)
    (folder / "repos.json").write_text(json.dumps([{
        "name": name, "repo": repo, "revision": commit, "language": "mixed",
        "url": f"https://github.com/{repo}", "benchmark_root": None}], indent=1))
    (folder / "annotations" / f"{name}.json").write_text(json.dumps(annotations, indent=1))
    return folder


def run(a):
    until_time = bench.deadline(a.time_limit)
    out = tables_dir(a.data, "symbol")
    work = Path(a.data) / "work" / "symbols"
    excluded = Excluded(a.excluded, a.mirrors)
    mined = json.loads((tables_dir(a.data, "commit") / "provenance.json").read_text()) \
        if (tables_dir(a.data, "commit") / "provenance.json").exists() else {"repos": {}}
    repos = sorted({v["repo"] for v in mined["repos"].values()})
    if not repos:
        raise SystemExit("symbols: no mined repository: run `iret-train mine` first (symbol "
                         "tasks come from the repositories mined, which it checked)")
    if a.only:
        repos = [r for r in repos if r in a.only.split(",")]
    prov = {"command": "iret-train symbols " + " ".join(sys.argv[2:]), "per_repo": a.per_repo,
            "min_users": a.min_users, "seed": a.seed, "repos": {}}
    for repo in repos:
        gd = git_dir(a.mirrors, repo)
        why = excluded.refused(repo, gd)
        if why:
            print(f"symbols: {repo}: refused ({why})", file=sys.stderr)
            continue
        table = out / f"{slug(repo)}.tsv"
        if table.exists():
            continue
        if time.time() >= until_time:
            print("symbols: time limit reached", file=sys.stderr)
            break
        head = subprocess.run(["git", f"--git-dir={gd}", "rev-parse", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        tasks = tasks_of(head_sources(gd, head), a.per_repo, a.min_users, a.seed)
        if len(tasks) < 5:
            print(f"symbols: {repo}: {len(tasks)} tasks, skipped", file=sys.stderr)
            continue
        started = time.time()
        commit = root_commit(gd, work / "mirrors" / slug(repo) / "repo", head)
        ds = dataset(work / "datasets" / slug(repo), repo, f"sym-{slug(repo)}", commit,
                     [{"query": n, "relevant": files, "secondary": [], "category": "symbol"}
                      for n, files in tasks])
        rows = bench.run(a.iret, ["--dataset", ds, "--mirrors", work / "mirrors",
                                  "--corpora", work / "checkouts", "--index-root", work / "idx",
                                  "--modes", "iterative"], table, timeout=bench.left(until_time))
        if rows is not None:
            prov["repos"][repo] = {"head": head, "tasks": len(tasks), "rows": rows}
            print(f"symbols: {repo}: {len(tasks)} tasks, {rows} rows, "
                  f"{time.time() - started:.0f} s", file=sys.stderr, flush=True)
    path = out / "provenance.json"
    if path.exists():
        old = json.loads(path.read_text())
        prov["repos"] = {**old.get("repos", {}), **prov["repos"]}
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(prov, indent=1))
