"""Runs `iret bench ... --features` and keeps its table only when the run finished: the table
is written as `.part` and renamed, so an interrupted run never leaves half a table."""
import subprocess
import sys
import time
from pathlib import Path


def run(iret, args, table, log=None, timeout=None, env=None):
    """`iret bench ARGS --features TABLE.part --json TABLE.json`; the rows written, or None
    when the run failed or ran out of time (the reason printed)."""
    table = Path(table)
    table.parent.mkdir(parents=True, exist_ok=True)
    part = table.with_suffix(".tsv.part")
    cmd = [str(iret), "bench", *map(str, args), "--features", str(part),
           "--json", str(table.with_suffix(".json"))]
    out = open(log, "w") if log else subprocess.DEVNULL
    try:
        subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT if log else subprocess.PIPE,
                       check=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        part.unlink(missing_ok=True)
        print(f"bench: {table.stem}: stopped at the time limit", file=sys.stderr)
        return None
    except subprocess.CalledProcessError as e:
        part.unlink(missing_ok=True)
        why = f"see {log}" if log else (e.stderr or b"").decode(errors="replace")[-500:]
        print(f"bench: {table.stem}: iret bench failed (exit {e.returncode}): {why}",
              file=sys.stderr)
        return None
    finally:
        if log:
            out.close()
    part.rename(table)
    with open(table) as f:
        return sum(1 for _ in f) - 1


def deadline(seconds):
    return time.time() + seconds


def left(until):
    return max(1.0, until - time.time())
