#!/usr/bin/env python3
"""One large corpus from many repositories, for measuring the store at scale
(docs/journal/benchmarks.md, session 21: 100,717 chunks).

Writes OUT/corpora/mega/<owner+name>/ with the HEAD tree of every mirror in MIRRORS
(`<owner>+<name>/repo`, as `fetch` leaves them), and OUT/bench/ with a semble-format
dataset: the semble queries, their gold paths under each repository's folder.

    scripts/combined-corpus.py --mirrors MIRRORS --semble SETS/semble --out MEGA
    iret --model-dir models/static-minilm --store chroma://127.0.0.1:8011/mega bench \\
        --dataset MEGA/bench --corpora MEGA/corpora \\
        --index-root MEGA/idx --modes hybrid,iterative
"""
import argparse, json, pathlib, re, subprocess

ap = argparse.ArgumentParser()
ap.add_argument("--mirrors", required=True)
ap.add_argument("--semble", required=True)
ap.add_argument("--out", required=True)
a = ap.parse_args()
out = pathlib.Path(a.out)
mega = out / "corpora" / "mega"
for repo in sorted(pathlib.Path(a.mirrors).glob("*/repo")):
    dest = mega / repo.parent.name
    dest.mkdir(parents=True, exist_ok=True)
    # A mirror missing some objects (ktor's here) gives what `git archive` could write.
    git = subprocess.Popen(["git", "--git-dir", str(repo), "archive", "HEAD"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    subprocess.run(["tar", "-x", "-C", str(dest)], stdin=git.stdout, stderr=subprocess.DEVNULL)
    if git.wait() != 0:
        print(f"{repo.parent.name}: git archive stopped early; kept what it wrote")

semble = pathlib.Path(a.semble)
def under(p, pre):
    if isinstance(p, dict):
        return dict(p, path=pre + p["path"])
    return pre + p
tasks = []
for r in json.load(open(semble / "repos.json")):
    m = re.search(r"github.com/([^/]+)/([^/.]+)", r["url"])
    root = (r.get("benchmark_root") or "").strip("/")
    pre = f"{m[1]}+{m[2]}/" + (root + "/" if root else "")
    for t in json.load(open(semble / "annotations" / f"{r['name']}.json")):
        t = dict(t, relevant=[under(p, pre) for p in t["relevant"]],
                 secondary=[under(p, pre) for p in t.get("secondary", [])])
        tasks.append(t)
bench = out / "bench"
(bench / "annotations").mkdir(parents=True, exist_ok=True)
json.dump(tasks, open(bench / "annotations" / "mega.json", "w"))
json.dump([{"name": "mega", "language": "mixed", "url": "local", "revision": "HEAD",
            "benchmark_root": None}], open(bench / "repos.json", "w"))
print(f"{len(tasks)} tasks; corpus at {mega}")
