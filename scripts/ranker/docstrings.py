#!/usr/bin/env python3
"""Mine docstring -> defining-file tasks (CodeSearchNet's recipe) for the learned ranker.

For each repository (a git mirror beside the project, `<mirrors>/<owner>+<name>/repo`), at
its HEAD: pick up to `--per-repo` documented declarations of non-test source files, at most
`--per-file` a file; the task is the docstring's first sentence (5 to 40 words, the declaration's own name
not in it), the gold file is the file that declares it. The docstrings are removed from
what is indexed: the stripped tree is written as a *root* commit of a scratch git directory
(`<work>/mirrors/<owner>+<name>/repo`, objects borrowed from the mirror), so the index sees
no history (a commit over 100 files is not attributed), as with an extracted tree (semble's
corpora), and no history signal can point at the stripped files. Then
`iret bench --mirrors --features` runs each repository's tasks through the loop and writes
one row per candidate, as `mine.py` does for commit tasks. Nothing mined is committed.

Only repositories `mine.py` already mined (its tables in `--mined`: it refused the excluded
ones by name and by root commit), and none named in `excluded-repos.txt`. Rerunnable: a
complete table is kept.

    python3 scripts/ranker/docstrings.py --iret target/release/iret --out /work/cache/doc/data
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from mine import SOURCE, excluded_names, git_dir  # noqa: E402

LINE_DOC = {  # languages whose docs are line comments before the declaration
    "rs": "///", "go": "//", "swift": "///", "cs": "///", "rb": "#", "dart": "///",
    "lua": "---", "c": "//", "h": "//", "cc": "//", "cpp": "//", "hpp": "//",
}
BLOCK_DOC = {"js", "jsx", "mjs", "ts", "tsx", "java", "kt", "scala", "php", "c", "h", "cc",
             "cpp", "hpp", "swift", "dart", "m"}
# C's own comments open with /* as often as with /**.
PLAIN_BLOCK = {"c", "h", "cc", "cpp", "hpp"}
DECL = re.compile(
    r"\b(?:def|fn|func|function|class|struct|enum|trait|interface|type|object|module|"
    r"impl|fun|val|var|let|const|protocol|extension)\b\s*(?:\([^)]*\)\s*)?([A-Za-z_][\w.:]*)"
    r"|([A-Za-z_]\w*)\s*(?:<[^>]*>)?\s*\(")
SKIP = re.compile(r"^(todo|fixme|deprecated|copyright|licen[sc]e|see |note:|xxx|hack|"
                  r"internal|private|nolint|eslint|@)", re.I)


TEST = re.compile(r"(^|/)(tests?|spec|specs|__tests__|testing|examples?|benches|benchmarks?|docs?|"
                  r"vendor|third_party|fixtures?)/|(^|/)test_|_test\.|\.test\.|\.spec\.|Tests?\.")


def is_test(path):
    return bool(TEST.search(path))


def sentence(text):
    """The first sentence of a docstring, markup dropped; None if it is not a task."""
    text = re.sub(r"`+|\*\*|[{}]|@\w+|<[^>]+>|\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = text.strip()
    para = re.split(r"\n\s*\n", text)[0]
    para = " ".join(para.split())
    m = re.match(r"(.+?[.!?])(\s|$)", para)
    s = m.group(1) if m else para
    words = s.split()
    if not 5 <= len(words) <= 40 or SKIP.match(s):
        return None
    if sum(c.isalpha() for c in s) < 0.6 * len(s):
        return None
    return s


def declared_name(line):
    m = DECL.search(line)
    if not m:
        return None
    return re.split(r"[.:]", m.group(1) or m.group(2))[-1] or None


def python_docs(lines):
    """(first line, last line, text, name) of each def/class docstring."""
    out = []
    for i, line in enumerate(lines):
        m = re.match(r"\s*(?:async\s+)?(?:def|class)\s+(\w+)", line)
        if not m:
            continue
        j = i
        while j < len(lines) and j < i + 15 and not lines[j].rstrip().endswith(":"):
            j += 1
        k = j + 1
        if k >= len(lines):
            continue
        q = re.match(r'\s*[rRuU]?("""|\'\'\')(.*)', lines[k])
        if not q:
            continue
        quote, rest = q.group(1), q.group(2)
        body = []
        end = k
        if quote in rest:
            body.append(rest.split(quote)[0])
        else:
            body.append(rest)
            end = k + 1
            while end < len(lines) and quote not in lines[end]:
                body.append(lines[end])
                end += 1
            if end >= len(lines):
                continue
            body.append(lines[end].split(quote)[0])
        out.append((k, end, "\n".join(body), m.group(1)))
    return out


def line_comment_docs(lines, marker):
    out = []
    i = 0
    while i < len(lines):
        if not lines[i].lstrip().startswith(marker):
            i += 1
            continue
        start = i
        while i < len(lines) and lines[i].lstrip().startswith(marker):
            i += 1
        j = i
        while j < len(lines) and re.match(r"\s*(#\[|@\w)", lines[j]):
            j += 1  # attributes and annotations between the doc and the declaration
        if j < len(lines):
            name = declared_name(lines[j])
            if name:
                text = "\n".join(l.lstrip()[len(marker):].lstrip("/!").strip()
                                 for l in lines[start:i])
                out.append((start, i - 1, text, name))
    return out


def block_docs(lines, opener="/**"):
    out = []
    i = 0
    while i < len(lines):
        if not lines[i].lstrip().startswith(opener):
            i += 1
            continue
        start = i
        while i < len(lines) and "*/" not in lines[i]:
            i += 1
        if i >= len(lines):
            break
        end = i
        j = i + 1
        while j < len(lines) and re.match(r"\s*(@\w|#\[|$)", lines[j]):
            j += 1
        if j < len(lines):
            name = declared_name(lines[j])
            if name:
                raw = "\n".join(lines[start:end + 1])
                raw = raw.replace(opener, "", 1).replace("*/", "")
                text = "\n".join(re.sub(r"^\s*\*\s?", "", l) for l in raw.split("\n"))
                out.append((start, end, text, name))
        i = end + 1
    return out


def quoted_docs(lines, opener, decl):
    """Elixir's `@doc \"\"\"` and Julia's `\"\"\"` blocks, followed by a declaration."""
    out = []
    i = 0
    while i < len(lines):
        if lines[i].strip() != opener:
            i += 1
            continue
        start = i
        i += 1
        while i < len(lines) and lines[i].strip() != '"""':
            i += 1
        if i >= len(lines):
            break
        end = i
        j = end + 1
        while j < len(lines) and (not lines[j].strip() or lines[j].lstrip().startswith("@")):
            j += 1
        m = re.match(decl, lines[j]) if j < len(lines) else None
        if m:
            out.append((start, end, "\n".join(lines[start + 1:end]), m.group(1)))
        i = end + 1
    return out


def docs_of(ext, lines):
    if ext == "py":
        return python_docs(lines)
    if ext in ("ex", "exs"):
        return quoted_docs(lines, '@doc """', r"\s*defp?\s+([a-z_]\w*[?!]?)")
    if ext == "jl":
        return quoted_docs(lines, '"""', r"\s*(?:function\s+|(?:mutable\s+)?struct\s+)?([A-Za-z_][\w!.]*)")
    found = []
    if ext in LINE_DOC:
        found += line_comment_docs(lines, LINE_DOC[ext])
    if ext in BLOCK_DOC:
        found += block_docs(lines, "/*" if ext in PLAIN_BLOCK else "/**")
    return found


def head_sources(gd, head, seed=None):
    """(path, text) of HEAD's non-test source files under 300 KB that are UTF-8, in a
    `seed`ed shuffled order when one is given, read lazily (a caller may stop early)."""
    listing = subprocess.run(["git", f"--git-dir={gd}", "ls-tree", "-r", "-l", head],
                             capture_output=True, text=True, check=True).stdout
    wanted = []
    for line in listing.splitlines():
        meta, path = line.split("\t", 1)
        _, kind, sha, size = meta.split()
        ext = path.rsplit(".", 1)[-1].lower() if "." in path else ""
        # A blob the mirror lacks lists its size as "BAD" (or "-"): skipped.
        if kind == "blob" and ext in SOURCE and size.isdigit() and int(size) < 300_000 \
                and not is_test(path):
            wanted.append((path, sha))
    if seed is not None:
        random.Random(seed).shuffle(wanted)
    cat = subprocess.Popen(["git", f"--git-dir={gd}", "cat-file", "--batch"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        for path, sha in wanted:
            cat.stdin.write(f"{sha}\n".encode())
            cat.stdin.flush()
            header = cat.stdout.readline().split()
            if len(header) < 3 or header[1] != b"blob":
                continue
            data = cat.stdout.read(int(header[2]))
            cat.stdout.read(1)
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                continue
            yield path, text
    finally:
        cat.stdin.close()
        cat.wait()


def tasks_of(gd, head, per_repo, per_file, seed):
    """[(path, query, the file's new text)]: up to `per_repo` tasks of HEAD, at most
    `per_file` a file; a file is written once, without the docstring of any of its tasks."""
    out = []
    for path, text in head_sources(gd, head, seed):
        if len(out) >= per_repo:
            break
        ext = path.rsplit(".", 1)[-1].lower()
        lines = text.split("\n")
        docs = [(a, b, q, n) for a, b, t, n in docs_of(ext, lines)
                for q in [sentence(t)] if q and n.lower() not in q.lower()]
        if not docs:
            continue
        random.Random(f"{seed}{path}").shuffle(docs)
        picked = docs[:per_file]
        drop = {i for a, b, _, _ in picked for i in range(a, b + 1)}
        stripped = "\n".join(l for i, l in enumerate(lines) if i not in drop)
        for _, _, query, _ in picked:
            out.append((path, query, stripped))
    return out


def stripped_commit(mirror_gd, scratch, head, tasks,
                    message="HEAD, docstrings of the tasks removed"):
    """A root commit of HEAD's tree with the tasks' files replaced; its id."""
    scratch.mkdir(parents=True, exist_ok=True)
    g = ["git", f"--git-dir={scratch}"]
    if not (scratch / "HEAD").exists():
        subprocess.run(["git", "init", "-q", "--bare", str(scratch)], check=True)
    alt = scratch / "objects/info/alternates"
    alt.parent.mkdir(parents=True, exist_ok=True)
    alt.write_text(str(Path(mirror_gd).resolve() / "objects") + "\n")
    env = dict(os.environ, GIT_INDEX_FILE=str(scratch / "strip-index"))
    subprocess.run(g + ["read-tree", head], env=env, check=True)
    for path, text in {p: t for p, _, t in tasks}.items():
        sha = subprocess.run(g + ["hash-object", "-w", "--stdin"], input=text.encode(),
                             capture_output=True, check=True).stdout.decode().strip()
        subprocess.run(g + ["update-index", "--cacheinfo", f"100644,{sha},{path}"],
                       env=env, check=True)
    tree = subprocess.run(g + ["write-tree"], env=env, capture_output=True, text=True,
                          check=True).stdout.strip()
    date = subprocess.run(["git", f"--git-dir={mirror_gd}", "log", "-1", "--format=%cI", head],
                          capture_output=True, text=True, check=True).stdout.strip()
    cenv = dict(os.environ, GIT_AUTHOR_NAME="iret", GIT_AUTHOR_EMAIL="iret@localhost",
                GIT_COMMITTER_NAME="iret", GIT_COMMITTER_EMAIL="iret@localhost",
                GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    commit = subprocess.run(g + ["commit-tree", tree, "-m", message],
                            env=cenv, capture_output=True, text=True, check=True).stdout.strip()
    subprocess.run(g + ["update-ref", "refs/heads/main", commit], check=True)
    subprocess.run(g + ["symbolic-ref", "HEAD", "refs/heads/main"], check=True)
    return commit


def bench_tasks(iret, repo, name, commit, annotations, work, out):
    """Run `annotations` (semble's format) on `commit` of the scratch mirror under `work`
    through `iret bench --features`: `out/<owner>+<name>.tsv`, one row per candidate; the
    rows written, or None when the bench failed."""
    slug = repo.replace("/", "+", 1)
    ds = work / "datasets" / slug
    (ds / "annotations").mkdir(parents=True, exist_ok=True)
    (ds / "repos.json").write_text(json.dumps([{
        "name": name, "repo": repo, "revision": commit, "language": "mixed",
        "url": f"https://github.com/{repo}", "benchmark_root": None}], indent=1))
    (ds / "annotations" / f"{name}.json").write_text(json.dumps(annotations, indent=1))
    table = out / f"{slug}.tsv"
    part = table.with_suffix(".tsv.part")
    run = subprocess.run([iret, "bench", "--dataset", str(ds), "--mirrors",
                          str(work / "mirrors"), "--corpora", str(work / "checkouts"),
                          "--index-root", str(work / "idx"), "--modes", "iterative",
                          "--features", str(part), "--json", str(out / f"{slug}.json")],
                         capture_output=True, text=True)
    if run.returncode != 0:
        print(f"{name}: bench failed: {run.stderr[-500:]}", file=sys.stderr)
        return None
    part.rename(table)
    return sum(1 for _ in open(table)) - 1


def synthetic_parser(description, out, work, per_repo):
    """The options every synthetic-task miner takes (this one and `symbols.py`)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--iret", default=str(ROOT / "target/release/iret"))
    ap.add_argument("--mirrors", default="/work/.mirror")
    ap.add_argument("--mined", default="/work/cache/mine/data", help="mine.py's tables")
    ap.add_argument("--excluded", default=str(ROOT.parent / "shared/train/excluded-repos.txt"))
    ap.add_argument("--out", default=out, help="the tables (never committed)")
    ap.add_argument("--work", default=work, help="scratch mirrors, checkouts, indexes")
    ap.add_argument("--per-repo", type=int, default=per_repo)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--time-limit", type=float, default=3600)
    ap.add_argument("--only", help="comma-separated owner/name")
    return ap


def mined_heads(a, tool):
    """(repo, slug, mirror git dir, HEAD) of each repository `mine.py` mined (its tables in
    `a.mined`: it refused the excluded ones by name and by root commit) and none named in
    `excluded-repos.txt`, whose table under `a.out` is not yet written, until `a.time_limit`."""
    excluded = excluded_names(a.excluded)
    repos = sorted(p.stem.replace("+", "/", 1) for p in Path(a.mined).glob("*.tsv"))
    if a.only:
        repos = [r for r in repos if r in a.only.split(",")]
    Path(a.out).mkdir(parents=True, exist_ok=True)
    started = time.time()
    for repo in repos:
        if repo.lower() in excluded:
            print(f"{tool}: {repo} is excluded: refused", file=sys.stderr)
            continue
        slug = repo.replace("/", "+", 1)
        if (Path(a.out) / f"{slug}.tsv").exists():
            continue
        if time.time() - started > a.time_limit:
            print(f"{tool}: time limit reached", file=sys.stderr)
            break
        gd = git_dir(a.mirrors, repo)
        if not (gd / "HEAD").exists():
            continue
        head = subprocess.run(["git", f"--git-dir={gd}", "rev-parse", "HEAD"],
                              capture_output=True, text=True).stdout.strip()
        if head:
            yield repo, slug, gd, head


def main():
    ap = synthetic_parser(__doc__.split("\n\n")[0], "/work/cache/doc/data", "/work/cache/doc", 120)
    ap.add_argument("--per-file", type=int, default=3)
    a = ap.parse_args()
    out, work = Path(a.out), Path(a.work)
    for repo, slug, gd, head in mined_heads(a, "docstrings"):
        tasks = tasks_of(gd, head, a.per_repo, a.per_file, a.seed)
        if len(tasks) < 5:
            print(f"docstrings: {repo}: {len(tasks)} tasks, skipped", file=sys.stderr)
            continue
        t0 = time.time()
        scratch = work / "mirrors" / slug / "repo"
        commit = stripped_commit(gd, scratch, head, tasks)
        annotations = [{"query": q, "relevant": [p], "secondary": [], "category": "docstring"}
                       for p, q, _ in tasks]
        rows = bench_tasks(a.iret, repo, f"doc-{slug}", commit, annotations, work, out)
        if rows is not None:
            print(f"docstrings: {repo}: {len(tasks)} tasks, {rows} rows, "
                  f"{time.time() - t0:.1f} s", file=sys.stderr)
    prov = {"command": " ".join(sys.argv), "per_repo": a.per_repo, "per_file": a.per_file,
            "seed": a.seed,
            "repos": sorted(p.stem for p in out.glob("*.tsv"))}
    (out / "provenance.json").write_text(json.dumps(prov, indent=1))


if __name__ == "__main__":
    main()
