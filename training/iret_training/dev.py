"""`dev`: the benchmark sets as training tasks. semble's questions and vocab-dev's tasks run
through the loop on their extracted corpora (`--corpora`, made by scripts/extract-corpus.py),
swebench-dev's issues on their checkouts from `--mirrors`, each by `iret bench --features`:
`<data>/tables/{semble,vocab,swebench}/`. They train only inside repository-grouped folds: a
figure on them is the out-of-fold one (`iret-train train` reports it)."""
import json
import sys
from pathlib import Path

from . import bench
from .tables import tables_dir

SETS = {"semble": "semble", "vocab": "vocab-dev", "swebench": "swebench-dev"}


def add_arguments(ap):
    ap.add_argument("--bench", required=True,
                    help="the folder holding the benchmark sets (semble/, vocab-dev/, "
                         "swebench-dev/ in semble's format)")
    ap.add_argument("--corpora", help="semble's extracted corpora (scripts/extract-corpus.py)")
    ap.add_argument("--limit", type=int,
                    help="swebench: at most this many issues per repository (the first in "
                         "commit order): a subset when time is short")
    ap.add_argument("--sets", default=",".join(SETS),
                    help=f"which sets, comma-separated (default: {','.join(SETS)})")


def run(a):
    until = bench.deadline(a.time_limit)
    work = Path(a.data) / "work" / "dev"
    for kind in a.sets.split(","):
        if kind not in SETS:
            raise SystemExit(f"dev: unknown set {kind!r} (known: {', '.join(SETS)})")
        dataset = Path(a.bench) / SETS[kind]
        if not (dataset / "repos.json").is_file():
            raise SystemExit(f"dev: {dataset} has no repos.json")
        table = tables_dir(a.data, kind) / f"{kind}.tsv"
        if table.exists():
            print(f"dev: {kind}: {table} is there, kept", file=sys.stderr)
            continue
        if kind == "swebench":
            if not a.mirrors:
                raise SystemExit("dev: swebench needs --mirrors (its repositories' git mirrors)")
            args = ["--dataset", dataset, "--mirrors", a.mirrors, "--corpora",
                    work / "swe-checkouts", "--index-root", work / "swe-idx"]
            if a.limit:
                args += ["--limit", a.limit]
        else:
            if not a.corpora:
                raise SystemExit(f"dev: {kind} needs --corpora (scripts/extract-corpus.py)")
            args = ["--dataset", dataset, "--corpora", a.corpora, "--index-root", work / "idx"]
        if kind == "swebench":
            write_gold_counts(dataset, table.with_suffix(".gold.json"))
        rows = bench.run(a.iret, [*args, "--modes", "iterative"], table,
                         log=table.with_suffix(".log"), timeout=bench.left(until))
        print(f"dev: {kind}: {rows} rows" if rows is not None else f"dev: {kind}: failed",
              file=sys.stderr, flush=True)


def write_gold_counts(dataset, path):
    """{instance: how many gold files} from a localisation set's annotations, so that a
    task whose gold files are not all among its candidates counts as not found."""
    counts = {}
    for entry in json.loads((dataset / "repos.json").read_text()):
        tasks = json.loads((dataset / "annotations" / f"{entry['name']}.json").read_text())
        counts[entry["name"]] = len({t if isinstance(t, str) else t["path"]
                                     for t in tasks[0].get("relevant", [])})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(counts, indent=1))
