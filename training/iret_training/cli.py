"""`python -m iret_training STEP` (or `iret-train STEP`): the steps that make iret's ranker."""
import argparse
import os
import sys
from pathlib import Path

from . import dev, evaluate, mine, symbols, train

STEPS = {
    "mine": (mine, "commit tasks from public git histories, through iret's loop"),
    "symbols": (symbols, "symbol-lookup tasks on the mined repositories' HEADs"),
    "dev": (dev, "the benchmark sets (semble, vocab-dev, swebench-dev) as training tasks"),
    "train": (train, "cross-validate by repository across kinds, train, export to ONNX"),
    "evaluate": (evaluate, "a ranker beside the rules: offline on the tables, or out of fold "
                           "online"),
}


def default_iret():
    """The iret binary: $IRET_BIN, else this checkout's release then debug build, else PATH."""
    if os.environ.get("IRET_BIN"):
        return os.environ["IRET_BIN"]
    root = Path(__file__).resolve().parents[2]
    for build in ("release", "debug"):
        if (root / "target" / build / "iret").is_file():
            return str(root / "target" / build / "iret")
    return "iret"


def parser():
    ap = argparse.ArgumentParser(prog="iret-train", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="step", required=True, metavar="STEP")
    for name, (module, help_) in STEPS.items():
        p = sub.add_parser(name, help=help_, description=module.__doc__,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        p.add_argument("--data", required=True,
                       help="the data folder: tables under DATA/tables/<kind>/, checkouts and "
                            "indexes under DATA/work/ (never inside the repository)")
        p.add_argument("--iret", default=default_iret(),
                       help="the iret binary that runs the tasks (default: $IRET_BIN, this "
                            "checkout's target/release/iret or target/debug/iret, or PATH)")
        p.add_argument("--mirrors", help="git mirrors, <owner>+<name>/repo each (the fetch tool's)")
        p.add_argument("--excluded",
                       help="excluded-repos.txt: repositories never trained on (required by "
                            "mine and symbols; train checks its mined tables against it)")
        p.add_argument("--time-limit", type=float, default=3600, help="seconds for the step")
        module.add_arguments(p)
    return ap


def main(argv=None):
    a = parser().parse_args(argv)
    if a.step in ("mine", "symbols"):
        if not a.mirrors or not a.excluded:
            raise SystemExit(f"{a.step}: --mirrors and --excluded are required")
    data = Path(a.data).resolve()
    repo = Path(__file__).resolve().parents[2]
    if data == repo or repo in data.parents:
        raise SystemExit(f"--data {a.data} is inside the repository: mined data stays outside it")
    STEPS[a.step][0].run(a)


if __name__ == "__main__":
    sys.exit(main())
