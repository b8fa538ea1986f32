"""`evaluate`: a ranker's order beside the rules'.

- `--model DIR`: the folder's ONNX model over the tables, per kind (offline; for a kind the model
  trained on this is an in-sample figure, said so by nothing but the caller: use the folds).
- `--folds DIR` (`train --fold-models`): the question sets (semble, vocab-dev) run online, each
  repository by the fold model that never trained on it (`IRET_RANKER_DIR`), in semble's protocol
  (chunk-level NDCG@10, mean per repository then over repositories; vocab-dev's gap and control
  tasks apart; the share of files scored >= 0.7 that are targets and of targets reaching 0.7)."""
import json
import os
from pathlib import Path

import numpy as np

from . import bench, export
from .kinds import KINDS
from .tables import load

SETS = {"semble": "semble", "vocab": "vocab-dev"}


def add_arguments(ap):
    ap.add_argument("--model", help="a ranker folder (ranker.onnx, manifest.json)")
    ap.add_argument("--folds", help="the fold models of `train --fold-models`")
    ap.add_argument("--bench", help="with --folds: the folder of the benchmark sets")
    ap.add_argument("--corpora", help="with --folds: semble's extracted corpora")
    ap.add_argument("--out", help="with --folds: where the bench reports go (default "
                                  "<data>/work/oof)")


def offline(a):
    t = load(a.data)
    manifest = json.loads((Path(a.model) / "manifest.json").read_text())
    cols = [t.names.index(n) for n in manifest["features"]]
    score = export.onnx_scores(Path(a.model) / "ranker.onnx", t.X[:, cols])
    out = {}
    for k in KINDS:
        ids = t.task_ids({k})
        if not ids:
            continue
        out[k] = t.side_by_side(score, ids)
        print(f"{k:10} rules {out[k]['rules']}\n{'':10} model {out[k]['learned']}")
    return out


def online(a):
    if not (a.bench and a.corpora and a.iret):
        raise SystemExit("evaluate --folds needs --bench, --corpora and --iret")
    out = Path(a.out or Path(a.data) / "work" / "oof")
    out.mkdir(parents=True, exist_ok=True)
    folds = sorted(Path(a.folds).glob("fold-*"))
    if not folds:
        raise SystemExit(f"evaluate: no fold-K/ under {a.folds} (train --fold-models)")
    figures = {}
    for kind, name in SETS.items():
        dataset = Path(a.bench) / name
        repos = json.loads((dataset / "repos.json").read_text())
        results = []
        for fold in folds:
            held = set(json.loads((fold / "heldout.json").read_text()))
            names = [r["name"] for r in repos if repo_id(r) in held]
            if not names:
                continue
            report = out / f"{kind}-{fold.name}.json"
            env = dict(os.environ, IRET_RANKER_DIR=str(fold.resolve()))
            rows = bench.run(a.iret, ["--dataset", dataset, "--corpora", a.corpora,
                                      "--index-root", Path(a.data) / "work" / "dev" / "idx",
                                      "--repos", ",".join(names), "--modes", "iterative,learned"],
                             out / f"{kind}-{fold.name}.tsv", env=env)
            if rows is None:
                raise SystemExit(f"evaluate: the {kind} run of {fold.name} failed")
            results += json.loads(report.read_text())["runs"]
        figures[kind] = summary(results)
        print_summary(kind, figures[kind])
    (out / "oof-online.json").write_text(json.dumps(figures, indent=1))
    return figures


def repo_id(entry):
    """owner/name of a repos.json entry, as `iret bench --features` writes it."""
    url = entry.get("url") or ""
    tail = url.split("github.com/", 1)[-1].rstrip("/").removesuffix(".git")
    return tail if "/" in tail else entry["name"]


def summary(runs):
    """Per mode: NDCG@10 mean per repository then over them (all tasks, and each group), the
    calibration shares, and per language."""
    modes = sorted({r["mode"] for run in runs for r in run["results"]})
    out = {}
    for mode in modes:
        per_group, lang, strong = {}, {}, np.zeros(4)
        for run in runs:
            rs = [r for r in run["results"] if r["mode"] == mode]
            for group in {None, *(r.get("group") for r in rs)}:
                v = [r["ndcg10"] for r in rs if group is None or r.get("group") == group]
                if v:
                    per_group.setdefault(group or "all", []).append(np.mean(v))
            lang.setdefault(run["language"], []).append(np.mean([r["ndcg10"] for r in rs]))
            for r in rs:
                strong += [r["strong_hits"], r["strong_files"], r["targets_strong"], r["targets"]]
        out[mode] = {
            **{g: round(float(np.mean(v)), 4) for g, v in per_group.items()},
            "languages": {k: round(float(np.mean(v)), 4) for k, v in sorted(lang.items())},
            "strong_that_are_targets": round(float(strong[0] / strong[1]), 3) if strong[1] else None,
            "targets_reaching_0.7": round(float(strong[2] / strong[3]), 3) if strong[3] else None,
            "repos": len(runs),
        }
    return out


def print_summary(kind, fig):
    for mode, m in fig.items():
        rest = {k: v for k, v in m.items() if k != "languages"}
        print(f"{kind:8} {mode:10} {rest}")
    if len(fig) == 2:
        base, learned = fig["iterative"]["languages"], fig["learned"]["languages"]
        print(f"{kind:8} per language, learned - rules: "
              + ", ".join(f"{k} {learned[k] - base[k]:+.3f}" for k in base))


def run(a):
    if bool(a.model) == bool(a.folds):
        raise SystemExit("evaluate: give --model (offline, on the tables) or --folds (online, "
                         "out of fold)")
    return offline(a) if a.model else online(a)
