#!/usr/bin/env python3
"""Speak MCP to the real `iret mcp` server with the official Python SDK (`pip install mcp`).

Smoke test on the fixture (lists the tools, runs both seed tasks):
  scripts/mcp-bench.py --smoke tests/fixtures/ts-app

Budgets (both seed tasks at budget_tokens 300, 1000 and 8000; one JSON line per call with
the text content the client received, for the caller to count with the shipped tokenizer):
  scripts/mcp-bench.py --budgets tests/fixtures/ts-app

Edit -> answer latency, the watcher on and off side by side (two servers, each on its own
copy of REPO, its index included, used in turn: each round edits a file, waits THINK seconds as an agent would, then
times a `search` for the new name and checks the edit is in the answer):
  scripts/mcp-bench.py --edit-latency REPO [--rounds 20] [--think 1.0] [--json out.json]

Several repositories in one server (two on the command line, a third offered as the
client's MCP root; paths outside them refused; an edit in each seen by the next call):
  scripts/mcp-bench.py --roots-check REPO_A REPO_B REPO_C

Latency and tokens through the server over a semble-format benchmark (warm: one
untimed call per repo first; every query is a `retrieve` call with default arguments):
  scripts/mcp-bench.py --dataset ../shared/bench/semble --corpora CORPORA \
      --index-root IDX [--repos a,b] [--json out.json]

Reports per call: wall time client-side (request to parsed response), the tokens of the
answer and of the code in it (`budget.tokens`, `budget.code_tokens`, counted by the server
with the shipped tokenizer), the
answer's size in bytes, and the file-level NDCG@10 of the files the answer returns
(targets = relevant + secondary, gain 1, as in ../shared/bench/semble/PROTOCOL.md).
"""
import argparse
import asyncio
import json
import math
import os
import statistics
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_BIN = os.path.join(HERE, "..", "target", "release", "iret")


def answer_of(result):
    # The SDK names these fields is_error / structured_content (2.x) or isError /
    # structuredContent (1.x).
    if getattr(result, "is_error", None) or getattr(result, "isError", None):
        text = result.content[0].text if result.content else ""
        raise RuntimeError(f"tool error: {text}")
    structured = getattr(result, "structured_content", None) or getattr(result, "structuredContent", None)
    if structured is None:
        raise RuntimeError("the answer has no structured content")
    return structured


def target_path(t):
    return (t if isinstance(t, str) else t["path"]).replace("\\", "/")


def hits(path, target):
    return path == target or path.endswith("/" + target) or target.endswith("/" + path)


def ndcg10(paths, targets):
    rel = [0] * 10
    for t in targets:
        for i, p in enumerate(paths[:10]):
            if hits(p, t):
                rel[i] = 1
                break
    dcg = sum(r / math.log2(i + 2) for i, r in enumerate(rel))
    idcg = sum(1 / math.log2(i + 2) for i in range(min(10, len(targets))))
    return dcg / idcg if idcg else 0.0


async def session_for(binary, root, index_dir=None):
    args = ["mcp", root] + (["--index-dir", index_dir] if index_dir else [])
    return StdioServerParameters(command=binary, args=args)


async def smoke(binary, root):
    params = await session_for(binary, root)
    async with stdio_client(params, errlog=open(os.devnull, "w")) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            tools = sorted(t.name for t in (await s.list_tools()).tools)
            print("tools:", ", ".join(tools))
            assert tools == ["find_related", "retrieve", "search", "status"], tools
            for task, want in [
                ("Fix the authentication token expiry bug", "src/auth/tokens.ts"),
                ("Add rate limiting to API endpoints", "src/middleware/throttle.ts"),
            ]:
                a = answer_of(await s.call_tool("retrieve", {"task": task, "trace": True}))
                files = [f"{f['path']} {f['relevance']:.2f}" for f in a["files"]]
                learned = [t["word"] for c in a["cycles"] for t in c["learned"]]
                print(f"{task!r}: {files}; learned {learned[:6]}")
                assert any(f["path"] == want for f in a["files"]), (want, files)
    print("smoke: ok")


SEED_TASKS = ["Fix the authentication token expiry bug", "Add rate limiting to API endpoints"]


async def budgets(binary, root):
    params = await session_for(binary, root)
    async with stdio_client(params, errlog=open(os.devnull, "w")) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            for task in SEED_TASKS:
                for budget in (300, 1000, 8000):
                    result = await s.call_tool("retrieve", {"task": task, "budget_tokens": budget})
                    a = answer_of(result)
                    print(json.dumps({
                        "task": task,
                        "budget": budget,
                        "text": result.content[0].text,
                        "tokens": a["budget"]["tokens"],
                        "files": [f["path"] for f in a["files"]],
                    }))


async def roots_check(binary, a, b, c):
    """Serves A and B from the command line and C as the client's root."""
    from mcp import types
    import pathlib

    async def list_roots(_context):
        return types.ListRootsResult(roots=[types.Root(uri=pathlib.Path(c).resolve().as_uri())])

    params = StdioServerParameters(command=binary, args=["mcp", a, b])
    async with stdio_client(params, errlog=open(os.devnull, "w")) as (r, w):
        async with ClientSession(r, w, list_roots_callback=list_roots) as s:
            await s.initialize()
            roots = []
            for _ in range(100):
                roots = answer_of(await s.call_tool("status", {}))["roots"]
                if len(roots) == 3:
                    break
                await asyncio.sleep(0.1)
            print("roots:", [(x["root"], x["opened"]) for x in roots])
            assert len(roots) == 3, roots
            for root in (a, b, c):
                st = answer_of(await s.call_tool("status", {"root": root}))
                print(f"status {root}: {st['files']} files, {st['chunks']} chunks")
            outside = await s.call_tool("search", {"query": "x", "root": "/"})
            assert getattr(outside, "is_error", None) or getattr(outside, "isError", None), outside
            print("outside:", outside.content[0].text)
            for root in (a, b, c):
                name = "iret_roots_check_probe_" + pathlib.Path(root).name.replace("-", "_")
                probe = pathlib.Path(root) / f"{name}.py"
                probe.write_text(f"def {name}():\n    return 'probe'\n")
                try:
                    hit = answer_of(await s.call_tool("search", {"query": name, "root": root}))
                    first = hit["chunks"][0]["path"] if hit["chunks"] else None
                    print(f"edit in {root}: first hit {first}")
                    assert first == probe.name, (root, first)
                finally:
                    probe.unlink()
    print("roots check: ok")


async def edit_latency(binary, root, rounds, think):
    """Edit, wait, search: the call's wall time with `iret mcp` watching and with --no-watch."""
    import contextlib
    import pathlib
    import shutil
    import tempfile

    modes = {"watch": [], "no-watch": []}
    tmp = tempfile.mkdtemp(prefix="iret-edit-latency-")
    copies = {}
    for mode in modes:
        copies[mode] = os.path.join(tmp, mode)
        shutil.copytree(root, copies[mode], symlinks=True)
    async with contextlib.AsyncExitStack() as stack:
        stack.callback(shutil.rmtree, tmp, True)
        sessions = {}
        for mode in modes:
            args = ["mcp", copies[mode]] + (["--no-watch"] if mode == "no-watch" else [])
            r, w = await stack.enter_async_context(
                stdio_client(StdioServerParameters(command=binary, args=args), errlog=open(os.devnull, "w")))
            s = await stack.enter_async_context(ClientSession(r, w))
            await s.initialize()
            await s.call_tool("search", {"query": "warm up"})
            sessions[mode] = s
        for i in range(rounds):
            for mode, s in sessions.items():
                name = f"iretEditProbe{i}{mode.replace('-', '')}"
                probe = pathlib.Path(copies[mode]) / "src" / f"probe_{i % 3}.ts"
                probe.parent.mkdir(exist_ok=True)
                probe.write_text(f"export function {name}(): string {{\n  return '{name}';\n}}\n")
                await asyncio.sleep(think)
                t = time.perf_counter()
                hit = answer_of(await s.call_tool("search", {"query": name, "k": 3}))
                ms = (time.perf_counter() - t) * 1000
                found = any(name in c["code"] for c in hit["chunks"])
                modes[mode].append({"ms": ms, "found": found})
    summary = {}
    for mode, rows in modes.items():
        ms = [r["ms"] for r in rows]
        summary[mode] = {
            "calls": len(rows),
            "ms_p50": round(statistics.median(ms), 1),
            "ms_p95": round(pct(ms, 0.95), 1),
            "found": sum(r["found"] for r in rows),
        }
    return summary


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round((len(xs) - 1) * p))]


async def bench(args):
    repos = json.load(open(os.path.join(args.dataset, "repos.json")))
    only = set(args.repos.split(",")) if args.repos else None
    rows = []
    for repo in repos:
        name = repo["name"]
        if only and name not in only:
            continue
        root = os.path.join(args.corpora, name)
        if not os.path.isdir(root):
            print(f"skipping {name}: no corpus", file=sys.stderr)
            continue
        tasks = json.load(open(os.path.join(args.dataset, "annotations", f"{name}.json")))
        params = await session_for(args.bin, root, os.path.join(args.index_root, name))
        async with stdio_client(params, errlog=open(os.devnull, "w")) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                answer_of(await s.call_tool("retrieve", {"task": tasks[0]["query"]}))  # warm
                for t in tasks:
                    t0 = time.perf_counter()
                    result = await s.call_tool("retrieve", {"task": t["query"]})
                    a = answer_of(result)
                    ms = (time.perf_counter() - t0) * 1000
                    targets = [target_path(x) for x in t.get("relevant", []) + t.get("secondary", [])]
                    paths = [f["path"] for f in a["files"]]
                    rows.append({
                        "repo": name,
                        "query": t["query"],
                        "ms": ms,
                        "answer_tokens": a["budget"]["tokens"],
                        "code_tokens": a["budget"]["code_tokens"],
                        "answer_bytes": len(result.content[0].text.encode()),
                        "files": len(paths),
                        "ndcg10_answer": ndcg10(paths, targets),
                    })
        print(f"{name}: {len(tasks)} calls", file=sys.stderr)
    ms = [r["ms"] for r in rows]
    tok = [r["code_tokens"] for r in rows]
    by_repo = {}
    for r in rows:
        by_repo.setdefault(r["repo"], []).append(r["ndcg10_answer"])
    summary = {
        "calls": len(rows),
        "retrieve_ms_p50": statistics.median(ms),
        "retrieve_ms_p95": pct(ms, 0.95),
        "code_tokens_mean": statistics.mean(tok),
        "code_tokens_p50": statistics.median(tok),
        "code_tokens_max": max(tok),
        "answer_tokens_p50": statistics.median(r["answer_tokens"] for r in rows),
        "answer_tokens_max": max(r["answer_tokens"] for r in rows),
        "answer_bytes_mean": statistics.mean(r["answer_bytes"] for r in rows),
        "files_per_answer_mean": statistics.mean(r["files"] for r in rows),
        "ndcg10_of_answer_mean_over_repos": statistics.mean(statistics.mean(v) for v in by_repo.values()),
    }
    print(json.dumps(summary, indent=2))
    if args.json:
        json.dump({"summary": summary, "calls": rows}, open(args.json, "w"), indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=DEFAULT_BIN, help="the iret binary (default: target/release/iret)")
    ap.add_argument("--smoke", metavar="REPO", help="list the tools and run the seed tasks on REPO")
    ap.add_argument("--budgets", metavar="REPO", help="the seed tasks at budgets 300, 1000, 8000 on REPO, one JSON line each")
    ap.add_argument("--edit-latency", metavar="REPO", help="edit -> answer latency on REPO, watcher on and off")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--think", type=float, default=1.0, help="seconds between the edit and the call")
    ap.add_argument("--roots-check", nargs=3, metavar="REPO", help="serve two repositories and the client's root in one server")
    ap.add_argument("--dataset")
    ap.add_argument("--corpora")
    ap.add_argument("--index-root")
    ap.add_argument("--repos")
    ap.add_argument("--json")
    args = ap.parse_args()
    if args.smoke:
        asyncio.run(smoke(args.bin, args.smoke))
    elif args.budgets:
        asyncio.run(budgets(args.bin, args.budgets))
    elif args.edit_latency:
        summary = asyncio.run(edit_latency(args.bin, args.edit_latency, args.rounds, args.think))
        print(json.dumps(summary, indent=2))
        if args.json:
            json.dump(summary, open(args.json, "w"), indent=1)
        for mode, row in summary.items():
            assert row["found"] == row["calls"], (mode, row)
    elif args.roots_check:
        asyncio.run(roots_check(args.bin, *args.roots_check))
    elif args.dataset and args.corpora and args.index_root:
        asyncio.run(bench(args))
    else:
        ap.error("give --smoke REPO, --budgets REPO, or --dataset, --corpora and --index-root")


if __name__ == "__main__":
    main()
