#!/usr/bin/env python3
"""The scale table of BENCHMARKS.md: how iret holds up as a repository grows.

For each NAME=TREE given, in turn (nothing else should run on the machine):
  1. the static tier, cold: `iret index --static TREE --index-dir DATA/NAME` under
     /usr/bin/time -v (wall, peak RSS), when its first generation went live (searchable:
     a large tree's goes live before its vector graph is built), then the files, chunks
     and bytes on disk of the live generation;
  2. the CLI: `iret search QUERY --no-refresh` as a whole process, 3 queries (median
     wall, largest peak RSS): what a user waits for, index opening included;
  3. MCP: one `iret mcp` server (the official Python SDK as client), 20 queries through
     `search` (the hybrid leg: one cycle) and 20 through `retrieve` (the loop), after one
     untimed call; per-call p50/p95 client-side, and the server's resident memory (VmRSS)
     after the 40 calls.

  scripts/scale-table.py --data /tmp/scale serde=/path/to/serde linux=/path/to/linux \
      [--iret target/release/iret] [--json scale.json] [--reuse]

Prints a markdown table (one row per tree) and, with --json, every figure.
"""
import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_BIN = os.path.join(HERE, "..", "target", "release", "iret")

# Tasks any large codebase has an answer to; latency and memory, not relevance, are measured.
QUERIES = [
    "compute a CRC32 checksum",
    "rate limiting of requests",
    "parse command line arguments",
    "read a configuration file",
    "retry a failed network request",
    "allocate memory from a pool",
    "hash table lookup and insertion",
    "convert a timestamp to a date string",
    "lock to protect shared state between threads",
    "log an error message with its context",
    "compress data before writing it",
    "validate user input and report errors",
    "sort a list with a custom comparison",
    "open a file and read it line by line",
    "serialize a structure to bytes",
    "timer that fires after a timeout",
    "free resources when an object is destroyed",
    "encrypt data with a key",
    "queue of pending work items processed by workers",
    "unit test for the parser",
]


def timed(cmd, ok=(0,)):
    """Runs cmd under /usr/bin/time -v: (wall seconds, peak RSS in MB, stdout); exit codes
    other than `ok` end the run."""
    out = subprocess.run(
        ["/usr/bin/time", "-v", *cmd], capture_output=True, text=True, check=False
    )
    if out.returncode not in ok:
        sys.exit(f"failed ({out.returncode}): {' '.join(cmd)}\n{out.stderr[-2000:]}")
    peak = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", out.stderr).group(1))
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", out.stderr).group(1)
    seconds = 0.0
    for part in wall.split(":"):
        seconds = seconds * 60 + float(part)
    return seconds, peak / 1024, out.stdout


def watch_for_live(index_dir):
    """Starts watching for `index_dir`'s first live generation (its CURRENT file); returns
    a function that gives the seconds from now until it appeared (None if it never did)."""
    import threading
    start = time.monotonic()
    seen = []
    done = threading.Event()

    def poll():
        while not done.is_set():
            if os.path.isfile(os.path.join(index_dir, "CURRENT")):
                seen.append(time.monotonic() - start)
                return
            time.sleep(0.2)

    t = threading.Thread(target=poll, daemon=True)
    t.start()

    def result():
        done.set()
        t.join()
        return seen[0] if seen else None

    return result


def live_generation(index_dir):
    with open(os.path.join(index_dir, "CURRENT")) as f:
        return os.path.join(index_dir, f.read().strip())


def disk_bytes(folder):
    return sum(
        os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(folder) for f in files
    )


def server_rss_mb():
    """The resident memory of this process's `iret mcp` child: (all, anonymous, file-backed
    pages) in MB. File-backed pages are the mapped index's, which the kernel drops first
    under memory pressure."""
    me = str(os.getpid())
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
            if stat.rsplit(")", 1)[1].split()[1] != me:
                continue
            fields = {}
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    key, _, rest = line.partition(":")
                    if key in ("VmRSS", "RssAnon", "RssFile"):
                        fields[key] = int(rest.split()[0]) / 1024
            return fields.get("VmRSS"), fields.get("RssAnon"), fields.get("RssFile")
        except (OSError, IndexError):
            continue
    return None, None, None


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


async def serve(binary, tree, index_dir):
    params = StdioServerParameters(
        command=binary, args=["mcp", tree, "--index-dir", index_dir, "--no-refresh", "--no-watch"]
    )
    times = {"search": [], "retrieve": []}
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                await s.call_tool("search", {"query": "warm up"})
                for tool, key in (("search", "query"), ("retrieve", "task")):
                    for q in QUERIES:
                        started = time.perf_counter()
                        result = await s.call_tool(tool, {key: q})
                        times[tool].append((time.perf_counter() - started) * 1000)
                        if getattr(result, "is_error", None) or getattr(result, "isError", None):
                            sys.exit(f"{tool} failed on {tree}: {result.content}")
                rss = server_rss_mb()
    return times, rss


def measure(binary, name, tree, data, reuse):
    index_dir = os.path.join(data, name)
    row = {"name": name}
    if not (reuse and os.path.isfile(os.path.join(index_dir, "CURRENT"))):
        shutil.rmtree(index_dir, ignore_errors=True)
        print(f"{name}: static tier of {tree}", file=sys.stderr)
        live = watch_for_live(index_dir)
        wall, peak, _ = timed([binary, "index", "--static", tree, "--index-dir", index_dir, "-q"])
        seconds = live()
        row["live_s"] = round(seconds, 1) if seconds is not None else None
        row["static_tier_s"] = round(wall, 1)
        row["index_peak_mb"] = round(peak)
    gen = live_generation(index_dir)
    with open(os.path.join(gen, "manifest.json")) as f:
        manifest = json.load(f)
    row.update(
        files=manifest["files"],
        chunks=manifest["chunks"],
        disk_mb=round(disk_bytes(gen) / 2**20),
    )
    print(f"{name}: CLI searches", file=sys.stderr)
    cli = [
        # Exit 1: no file reached the relevance threshold, an answer all the same.
        timed(
            [binary, "search", q, "-C", tree, "--index-dir", index_dir, "--no-refresh", "-k", "5"],
            ok=(0, 1),
        )
        for q in QUERIES[:3]
    ]
    row["cli_search_s"] = round(statistics.median(c[0] for c in cli), 2)
    row["cli_search_peak_mb"] = round(max(c[1] for c in cli))
    print(f"{name}: MCP", file=sys.stderr)
    times, rss = asyncio.run(serve(binary, tree, index_dir))
    for tool, label in (("search", "hybrid"), ("retrieve", "loop")):
        row[f"{label}_p50_ms"] = round(statistics.median(times[tool]), 1)
        row[f"{label}_p95_ms"] = round(percentile(times[tool], 95), 1)
    for key, mb in zip(("mcp_rss_mb", "mcp_anon_mb", "mcp_file_mb"), rss):
        row[key] = round(mb) if mb is not None else None
    return row


COLUMNS = [
    ("name", "repository"),
    ("files", "files"),
    ("chunks", "chunks"),
    ("live_s", "searchable after (s)"),
    ("static_tier_s", "static tier with graph (s)"),
    ("index_peak_mb", "peak RSS indexing (MB)"),
    ("disk_mb", "on disk (MB)"),
    ("cli_search_s", "CLI search (s)"),
    ("cli_search_peak_mb", "CLI search peak (MB)"),
    ("mcp_rss_mb", "MCP RSS after 40 calls (MB)"),
    ("mcp_anon_mb", "of it anonymous (MB)"),
    ("hybrid_p50_ms", "hybrid p50 (ms)"),
    ("hybrid_p95_ms", "hybrid p95 (ms)"),
    ("loop_p50_ms", "loop p50 (ms)"),
    ("loop_p95_ms", "loop p95 (ms)"),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trees", nargs="+", metavar="NAME=TREE")
    ap.add_argument("--data", required=True, help="folder for the indexes (one per NAME)")
    ap.add_argument("--iret", default=os.environ.get("IRET_BIN", DEFAULT_BIN))
    ap.add_argument("--json", help="write every figure here")
    ap.add_argument(
        "--reuse",
        action="store_true",
        help="serve an index already in DATA/NAME instead of building it (no build figures)",
    )
    args = ap.parse_args()
    rows = []
    for spec in args.trees:
        name, sep, tree = spec.partition("=")
        if not sep or not os.path.isdir(tree):
            sys.exit(f"expected NAME=TREE with TREE a folder: {spec}")
        rows.append(
            measure(os.path.abspath(args.iret), name, os.path.abspath(tree), args.data, args.reuse)
        )
        if args.json:
            with open(args.json, "w") as f:
                json.dump(rows, f, indent=1)
    print("| " + " | ".join(label for _, label in COLUMNS) + " |")
    print("|" + " --- |" * len(COLUMNS))
    for r in rows:
        print("| " + " | ".join(str(r.get(k, "")) for k, _ in COLUMNS) + " |")


if __name__ == "__main__":
    main()
