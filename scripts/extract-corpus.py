#!/usr/bin/env python3
"""Extract benchmark corpora from `fetch` mirrors at their pinned revisions.

Usage:
  scripts/extract-corpus.py --repos ../shared/bench/semble/repos.json \
      --mirrors MIRRORS --out CORPORA [--only NAME ...]

For each repo in repos.json, finds the mirror `<mirrors>/<owner>+<name>/repo`
(a bare git directory), lists `<revision>:<benchmark_root>` with
`git ls-tree -r -z` and writes each blob via `git cat-file --batch`. Blobs
missing from the snapshot (files of 4 MiB or more) are skipped and reported.
Output: `<out>/<name>/` holds the benchmark root's tree (paths relative to it).
Nothing here is ever committed to the iret repository.
"""
import argparse
import json
import os
import subprocess
import sys


def mirror_dir(mirrors, url):
    parts = url.rstrip("/").removesuffix(".git").split("/")
    owner, name = parts[-2], parts[-1]
    return os.path.join(mirrors, f"{owner}+{name}", "repo")


def has_commit(git_dir, revision):
    return subprocess.run(["git", "--git-dir", git_dir, "cat-file", "-e", revision + "^{commit}"],
                          capture_output=True).returncode == 0


def extract(git_dir, revision, root, dest):
    spec = revision if not root else f"{revision}:{root}"
    ls = subprocess.run(
        ["git", "--git-dir", git_dir, "ls-tree", "-r", "-z", spec],
        check=True, capture_output=True,
    ).stdout
    entries = []
    for rec in ls.split(b"\0"):
        if not rec:
            continue
        meta, path = rec.split(b"\t", 1)
        mode, kind, sha = meta.split(b" ")
        if kind != b"blob" or mode == b"120000":  # skip submodules and symlinks
            continue
        entries.append((sha.decode(), path.decode("utf-8", "surrogateescape")))
    proc = subprocess.Popen(
        ["git", "--git-dir", git_dir, "cat-file", "--batch"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
    )
    written = missing = 0
    for sha, path in entries:
        proc.stdin.write(sha.encode() + b"\n")
        proc.stdin.flush()
        header = proc.stdout.readline().split()
        if len(header) < 3 or header[1] == b"missing":
            missing += 1
            continue
        size = int(header[2])
        data = proc.stdout.read(size)
        proc.stdout.read(1)  # trailing newline
        out = os.path.join(dest, path)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "wb") as f:
            f.write(data)
        written += 1
    proc.stdin.close()
    proc.wait()
    return written, missing


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repos", required=True, help="repos.json of the benchmark")
    ap.add_argument("--mirrors", required=True, help="folder of fetch mirrors (<owner>+<name>/repo)")
    ap.add_argument("--out", required=True, help="cache folder for extracted corpora")
    ap.add_argument("--only", nargs="*", help="repo names to extract (default: all)")
    ap.add_argument("--allow-head-fallback", action="store_true",
                    help="when the pinned revision is absent from the snapshot, use the snapshot's HEAD "
                         "(reported, and recorded in <out>/<name>.REVISION)")
    ap.add_argument("--root-override", action="append", default=[], metavar="NAME=PATH",
                    help="index PATH instead of the repo's benchmark_root (for snapshots whose layout differs; "
                         "recorded in <out>/<name>.REVISION)")
    args = ap.parse_args()
    overrides = dict(o.split("=", 1) for o in args.root_override)
    repos = json.load(open(args.repos))
    failed = 0
    for repo in repos:
        name = repo["name"]
        if args.only and name not in args.only:
            continue
        dest = os.path.join(args.out, name)
        if os.path.isdir(dest) and os.listdir(dest):
            print(f"{name}: already extracted at {dest}")
            continue
        git_dir = mirror_dir(args.mirrors, repo["url"])
        if not os.path.isdir(git_dir):
            print(f"{name}: no mirror at {git_dir} (fetch github:<owner>/<name> first)", file=sys.stderr)
            failed += 1
            continue
        revision = repo["revision"]
        if not has_commit(git_dir, revision):
            if not args.allow_head_fallback:
                print(f"{name}: revision {revision} is not in the snapshot (see --allow-head-fallback)", file=sys.stderr)
                failed += 1
                continue
            revision = subprocess.run(["git", "--git-dir", git_dir, "rev-parse", "HEAD"],
                                      check=True, capture_output=True, text=True).stdout.strip()
            print(f"{name}: WARNING pinned revision missing from snapshot; using HEAD {revision}", file=sys.stderr)
        tmp = dest + ".partial"
        subprocess.run(["rm", "-rf", tmp], check=True)
        os.makedirs(tmp)
        written, missing = extract(git_dir, revision, overrides.get(name, repo.get("benchmark_root")), tmp)
        os.rename(tmp, dest)
        with open(dest + ".REVISION", "w") as f:
            f.write(revision + "\n")
            if name in overrides:
                f.write(f"root-override {overrides[name]}\n")
        print(f"{name}: {written} files, {missing} missing from the snapshot -> {dest}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
