#!/usr/bin/env python3
"""Where the bytes of an `iret` binary go: its sections, the tree-sitter parse tables linked
into it, and each large embedded file (named by matching its size against the files given).

Usage: scripts/binary-bytes.py BINARY [--named DIR ...] [--json OUT]
  --named DIR   files whose size names an embedded blob (default: models/ and the build's
                bundled .xz files under target/release/build/*/out/)
Needs binutils (`size`, `nm`).
"""
import argparse
import glob
import json
import os
import subprocess


def sections(binary):
    out = subprocess.run(["size", "-A", binary], capture_output=True, text=True, check=True).stdout
    rows = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0].startswith(".") and parts[1].isdigit():
            rows[parts[0]] = int(parts[1])
    return rows


def symbols(binary):
    out = subprocess.run(["nm", "-S", "-C", "--size-sort", binary], capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 4:
            yield " ".join(parts[3:]), int(parts[1], 16)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary")
    ap.add_argument("--named", nargs="*", default=None)
    ap.add_argument("--json")
    args = ap.parse_args()
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    dirs = args.named if args.named is not None else [os.path.join(here, "models", "*")] + glob.glob(
        os.path.join(here, "target", "release", "build", "*", "out"))
    by_size = {}
    for d in dirs:
        for f in glob.glob(os.path.join(d, "*")):
            if os.path.isfile(f) and os.path.getsize(f) >= 100_000:
                by_size.setdefault(os.path.getsize(f), os.path.relpath(f, here))
    secs = sections(args.binary)
    grammar_tables = 0
    blobs = []
    for name, size in symbols(args.binary):
        if name.startswith("ts_") or name.startswith("aliases") or name.startswith("lex_modes"):
            grammar_tables += size
        elif size >= 100_000:
            blobs.append((by_size.get(size, name), size))
    # Files embedded without a symbol of their own: found by their first 4 KB in the binary.
    matched = {n for n, _ in blobs}
    with open(args.binary, "rb") as f:
        image = f.read()
    for size, name in by_size.items():
        if name in matched:
            continue
        with open(os.path.join(here, name), "rb") as f:
            head = f.read(4096)
        if image.find(head) >= 0:
            blobs.append((name, size))
    total = os.path.getsize(args.binary)
    rows = [("file", total)]
    rows += [(f"section {k}", v) for k, v in sorted(secs.items(), key=lambda kv: -kv[1]) if v >= 500_000]
    rows.append(("  tree-sitter parse tables and runtime linked in (ts_*)", grammar_tables))
    def label(n):
        return f"{os.path.basename(n)} (built)" if n.startswith("target") else n
    rows += [(f"  embedded {label(n)}", s) for n, s in sorted(blobs, key=lambda b: -b[1])]
    rows.append(("symbol and string tables, other sections", total - sum(secs.values())))
    for name, size in rows:
        print(f"| {name} | {size / 1e6:.1f} MB |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(rows), f, indent=1)


if __name__ == "__main__":
    main()
