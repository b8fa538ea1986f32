#!/usr/bin/env python3
"""Train iret's learned ranker: LightGBM LambdaMART over the features `iret bench --features`
exports (one row per loop candidate), validated by repository (group k-fold: a repository's
tasks are never in the fold that is tested on it), then exported to ONNX for the binary.

Writes into --model (default models/ranker/):
  ranker.onnx      the trees (onnxmltools; ONNX-ML TreeEnsembleRegressor), input "features"
  manifest.json    the feature names in order, Platt calibration (a, b), trees, parameters
  cv.json          the repository-held-out figures, learned against the rules, side by side
  importance.tsv   gain per feature (the final model)
and prints the cross-validation table. Requirements: scripts/ranker/requirements.txt.

    python3 scripts/ranker/train.py --data /work/cache/mine/data --model models/ranker
"""
import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

FIXED = ["task", "repo", "mode", "path", "label"]
PARAMS = {
    "objective": "lambdarank",
    "metric": "ndcg",
    "eval_at": [1, 3, 5],
    "learning_rate": 0.05,
    "num_leaves": 31,
    "min_data_in_leaf": 50,
    "feature_fraction": 0.8,
    "bagging_fraction": 0.8,
    "bagging_freq": 1,
    "lambdarank_truncation_level": 20,
    "num_threads": 2,
    "seed": 7,
    "deterministic": True,
    "verbose": -1,
}
ROUNDS = 300


DEFAULT_DATA = "/work/cache/mine/data"


def data_dirs(data):
    """`--data` as a list of folders: one (a path), several (`--data A --data B`: a later
    mining run's tables, such as `mine.py --older-than A`), or the default."""
    if not data:
        return [Path(DEFAULT_DATA)]
    return [Path(data)] if isinstance(data, (str, Path)) else [Path(d) for d in data]


def load(data, mode="iterative", with_paths=False):
    """Rows of every table of the `data` folders: (features, labels, task ids, repos,
    names), and with `with_paths` the candidates' paths last."""
    names = None
    feats, labels, tasks, repos, paths = [], [], [], [], []
    files = [f for d in data_dirs(data) for f in sorted(d.glob("*.tsv"))]
    if not files:
        sys.exit(f"train: no *.tsv under {data} (scripts/ranker/mine.py writes them)")
    for path in files:
        with open(path) as f:
            header = f.readline().rstrip("\n").split("\t")
            cols = header[len(FIXED):]
            if names is None:
                names = cols
            elif cols != names:
                sys.exit(f"train: {path} has other feature columns than {files[0]}: re-mine it")
            for line in f:
                parts = line.rstrip("\n").split("\t")
                if parts[2] != mode:
                    continue
                tasks.append(parts[0])
                repos.append(parts[1])
                paths.append(parts[3])
                labels.append(int(parts[4]))
                feats.append([float(x) for x in parts[len(FIXED):]])
    X = np.asarray(feats, dtype=np.float32)
    y = np.asarray(labels, dtype=np.int32)
    keep = distinct_tasks(X, y, tasks)
    out = X[keep], y[keep], np.asarray(tasks)[keep], np.asarray(repos)[keep], names
    return (*out, np.asarray(paths)[keep]) if with_paths else out


def distinct_tasks(X, y, tasks):
    """Rows to keep: a commit without a body was mined (before `iret bench` made it one
    task) as two tasks of one text, `NAME` and `NAME~subject`, with the same rows (to a
    cosine's last float digits); the second copy is left out, so that each text counts
    and weighs once."""
    keep = np.ones(len(tasks), dtype=bool)
    spans = {}
    for a, b in groups_of(tasks):
        spans[tasks[a]] = (a, b)
    dropped = 0
    for name, (a, b) in spans.items():
        twin = spans.get(name[: -len("~subject")]) if name.endswith("~subject") else None
        if twin and twin[1] - twin[0] == b - a and np.array_equal(y[a:b], y[twin[0]:twin[1]]) \
                and np.allclose(X[a:b], X[twin[0]:twin[1]], rtol=0, atol=1e-4, equal_nan=True):
            keep[a:b] = False
            dropped += 1
    if dropped:
        print(f"train: {dropped} subject tasks left out: the same text as their commit's task",
              file=sys.stderr)
    return keep


def share(names, fraction, seed=1):
    """A seeded `fraction` of `names` (all of them at 1)."""
    if fraction >= 1:
        return names
    names = list(names)
    np.random.default_rng(seed).shuffle(names)
    return names[: max(1, round(fraction * len(names)))]


def groups_of(tasks):
    """Row index ranges of each task (rows of a task are contiguous in a table)."""
    bounds = [0]
    for i in range(1, len(tasks)):
        if tasks[i] != tasks[i - 1]:
            bounds.append(i)
    bounds.append(len(tasks))
    return [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)]


def rank_of_all(order_labels):
    """1-based rank by which every gold row has appeared (None: a gold file is missing)."""
    gold = [i for i, l in enumerate(order_labels) if l]
    return gold[-1] + 1 if gold else None


def ndcg10(order_labels, n_gold):
    dcg = sum(1 / math.log2(i + 2) for i, l in enumerate(order_labels[:10]) if l)
    idcg = sum(1 / math.log2(i + 2) for i in range(min(n_gold, 10)))
    return dcg / idcg if idcg else 0.0


def metrics(groups, y, score, gold_counts):
    """Acc@k (every gold file of the task in the top k) and NDCG@10 over tasks, higher
    score first; a gold file that is no candidate counts as not found."""
    acc = {1: 0, 3: 0, 5: 0, 10: 0}
    nd = 0.0
    for (a, b), n_gold in zip(groups, gold_counts):
        order = np.argsort(-score[a:b], kind="stable")
        labels = y[a:b][order]
        found = int(labels.sum())
        r = rank_of_all(labels) if found == n_gold else None
        for k in acc:
            acc[k] += r is not None and r <= k
        nd += ndcg10(list(labels), n_gold)
    n = len(groups)
    out = {f"acc@{k}": round(100 * v / n, 1) for k, v in acc.items()}
    out["ndcg@10"] = round(nd / n, 4)
    out["tasks"] = n
    return out


def gold_counts_of(data, groups, tasks):
    """How many gold files each task has (from the bench's JSON: candidates may miss some)."""
    gold = {}
    for path in (p for d in data_dirs(data) for p in d.glob("*.json")):
        if path.name == "provenance.json":
            continue
        try:
            doc = json.loads(path.read_text())
        except json.JSONDecodeError:
            continue
        for run in doc.get("runs", []):
            gold[run["name"]] = len(run["gold"])
    return [gold.get(tasks[a], 1) for a, _ in groups]


HISTORY = ["history_messages", "history_similar", "history_refs", "history_fixes",
           "history_commits", "history_age"]
# The share of training tasks also seen as a repository without history (an extracted tree,
# a shallow clone): their history features as iret computes them there (0, age missing).
HISTORY_DROPOUT = 0.0
NAMES = []


def without_history(X):
    """`X` as a repository without history would give it."""
    Xh = X.copy()
    for name in HISTORY:
        if name in NAMES:
            Xh[:, NAMES.index(name)] = np.nan if name == "history_age" else 0.0
    return Xh


# The ranker boosts from the hand-set rules: `BASE_WEIGHT * rules_score` is every row's
# starting score (LightGBM's init_score), the trees learn the correction, and serving adds
# the same term to the trees' output (manifest `base`). 0: trees alone.
BASE_WEIGHT = 0.0


def base(X):
    return BASE_WEIGHT * np.nan_to_num(X[:, NAMES.index("rules_score")]) if BASE_WEIGHT else 0.0


def predict(model, X):
    return model.predict(X) + base(X)


def fit(lgb, X, y, groups, rows, rounds):
    sel = np.concatenate([np.arange(a, b) for a, b in rows])
    Xs, ys, gs = X[sel], y[sel], [b - a for a, b in rows]
    if HISTORY_DROPOUT > 0:
        rng = np.random.default_rng(11)
        picked = [r for r in rows if rng.random() < HISTORY_DROPOUT]
        if picked:
            extra = np.concatenate([np.arange(a, b) for a, b in picked])
            Xs = np.concatenate([Xs, without_history(X[extra])])
            ys = np.concatenate([ys, y[extra]])
            gs = gs + [b - a for a, b in picked]
    init = base(Xs) if BASE_WEIGHT else None
    ds = lgb.Dataset(Xs, ys, group=gs, init_score=init, free_raw_data=False)
    return lgb.train(PARAMS, ds, num_boost_round=rounds)


def context(scores, groups):
    """What calibration reads of a candidate's score within its task: the score, its
    distance below the task's best, and for the best its margin over the second
    (iret_rank::calibration_inputs computes the same)."""
    out = np.zeros((len(scores), 3))
    for a, b in groups:
        s = scores[a:b]
        top = s.max()
        rest = np.sort(s)[::-1]
        margin = top - rest[1] if b - a > 1 else 1.0
        out[a:b, 0] = s
        out[a:b, 1] = s - top
        out[a:b, 2] = np.where(s == top, margin, 0.0)
    return out


def calibrate(scores, labels, groups):
    """Logistic calibration on held-out scores in their task's context:
    p = 1 / (1 + exp(-(w . context + b)))."""
    from sklearn.linear_model import LogisticRegression

    lr = LogisticRegression(C=1e6, max_iter=2000)
    lr.fit(context(scores, groups), labels)
    return [float(w) for w in lr.coef_[0]], float(lr.intercept_[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", action="append",
                    help=f"a folder of mined tables; repeat for several (default {DEFAULT_DATA})")
    ap.add_argument("--model", default=str(Path(__file__).resolve().parents[2] / "models/ranker"))
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--mode", default="iterative",
                    help="the mode whose rows are read (mine.py --mode)")
    ap.add_argument("--rounds", type=int, default=ROUNDS)
    ap.add_argument("--seed", type=int, default=PARAMS["seed"],
                    help="LightGBM's seed (bagging, feature sampling): to measure how much "
                    "a figure moves between equally good models")
    ap.add_argument("--time-limit", type=float, default=1800, help="seconds (the issue's bar)")
    ap.add_argument("--no-export", action="store_true", help="cross-validate only")
    ap.add_argument("--save-oof", metavar="FILE",
                    help="write the out-of-fold scores (.npz: task, label, learned, rules per "
                    "row) to compare runs on the same tasks")
    ap.add_argument("--train-share", type=float, default=1.0,
                    help="train each fold on this share of its training repositories (a "
                         "learning curve; validation is unchanged)")
    ap.add_argument("--history-dropout", type=float, default=0.0,
                    help="share of tasks also trained on as if the repository had no history")
    ap.add_argument("--base-weight", type=float, default=0.0,
                    help="boost from the rules: this times rules_score is every candidate's "
                    "starting score, the trees learn the correction (0: trees alone)")
    ap.add_argument("--docstring-weight", type=int, default=1,
                    help="each synthetic (docstring or symbol) task trained on this many times")
    ap.add_argument("--synthetic", "--docstrings", dest="docstrings", action="append",
                    help="tables of synthetic tasks on a repository's HEAD: docstring -> "
                    "defining file (scripts/ranker/docstrings.py) or symbol -> defining file "
                    "(scripts/ranker/symbols.py), trained on beside the commit tasks as a "
                    "repository without history, validated by the same folds, reported apart; "
                    "repeat for several")
    args = ap.parse_args()
    global HISTORY_DROPOUT, BASE_WEIGHT
    PARAMS["seed"] = args.seed
    HISTORY_DROPOUT = args.history_dropout
    BASE_WEIGHT = args.base_weight
    import lightgbm as lgb

    started = time.time()
    X, y, tasks, repos, names = load(args.data, args.mode)
    NAMES[:] = names
    n_commit_rows = len(y)
    if args.docstrings:
        Xd, yd, td, rd, nd = load(args.docstrings)
        if nd != names:
            sys.exit("train: the docstring tables have other feature columns: re-mine them")
        # Their stripped tree is a root commit, an artefact: read as no history at all.
        X = np.concatenate([X, without_history(Xd)])
        y, tasks, repos = np.concatenate([y, yd]), np.concatenate([tasks, td]), np.concatenate([repos, rd])
    groups = groups_of(tasks)
    tables = data_dirs(args.data) + (data_dirs(args.docstrings) if args.docstrings else [])
    gold_counts = gold_counts_of(tables, groups, tasks)
    is_doc = np.asarray([a >= n_commit_rows for a, _ in groups])
    group_repo = np.asarray([repos[a] for a, _ in groups])
    # Tasks without a gold candidate teach nothing (but count as misses in the figures).
    trainable = [i for i, (a, b) in enumerate(groups) if y[a:b].any()]
    rules = -X[:, names.index("rules_rank")]
    uniq = sorted(set(group_repo))
    rng = np.random.default_rng(7)
    rng.shuffle(uniq)
    fold_of = {r: i % args.folds for i, r in enumerate(uniq)}
    oof = np.zeros(len(y), dtype=np.float64)
    per_fold = []
    for k in range(args.folds):
        if time.time() - started > args.time_limit:
            sys.exit("train: time limit reached during cross-validation")
        kept = set(share(sorted(r for r in uniq if fold_of[r] != k), args.train_share))
        train_g = [groups[i] for i in trainable if group_repo[i] in kept
                   for _ in range(args.docstring_weight if is_doc[i] else 1)]
        test_g = [i for i in range(len(groups)) if fold_of[group_repo[i]] == k]
        model = fit(lgb, X, y, groups, train_g, args.rounds)
        for i in test_g:
            a, b = groups[i]
            oof[a:b] = predict(model, X[a:b])
        tg = [groups[i] for i in test_g if not is_doc[i]]
        tc = [gold_counts[i] for i in test_g if not is_doc[i]]
        per_fold.append({
            "fold": k,
            "repos": sorted({group_repo[i] for i in test_g}),
            "learned": metrics(tg, y, oof, tc),
            "rules": metrics(tg, y, rules, tc),
        })
        print(f"fold {k}: learned {per_fold[-1]['learned']} rules {per_fold[-1]['rules']}",
              file=sys.stderr, flush=True)
    commit = [i for i in range(len(groups)) if not is_doc[i]]
    learned = metrics([groups[i] for i in commit], y, oof, [gold_counts[i] for i in commit])
    rule = metrics([groups[i] for i in commit], y, rules, [gold_counts[i] for i in commit])
    by_kind = {}
    for kind, pick in (("subject", lambda t: t.endswith("~subject")),
                       ("full message", lambda t: not t.endswith("~subject")
                        and not t.startswith(("doc-", "sym-"))),
                       ("docstring", lambda t: t.startswith("doc-")),
                       ("symbol", lambda t: t.startswith("sym-"))):
        idx = [i for i, (a, _) in enumerate(groups) if pick(tasks[a])]
        if not idx:
            continue
        g = [groups[i] for i in idx]
        c = [gold_counts[i] for i in idx]
        by_kind[kind] = {"learned": metrics(g, y, oof, c), "rules": metrics(g, y, rules, c)}
    lang_col = names.index("language")
    by_lang = {}
    for i in commit:
        by_lang.setdefault(int(X[groups[i][0], lang_col]), []).append(i)
    by_language = {}
    for code, idx in sorted(by_lang.items()):
        g = [groups[i] for i in idx]
        c = [gold_counts[i] for i in idx]
        by_language[code] = {"learned": metrics(g, y, oof, c), "rules": metrics(g, y, rules, c)}
    a, b = calibrate(oof, y, groups)
    prob = 1 / (1 + np.exp(-(context(oof, groups) @ np.asarray(a) + b)))
    strong = prob >= 0.7
    calib = {
        "share_of_strong_that_are_gold": round(float(y[strong].mean()), 3) if strong.any() else None,
        "share_of_gold_reaching_0.7": round(float(strong[y == 1].mean()), 3),
    }
    cv = {
        "tasks": len(commit),
        "docstring_tasks": len(groups) - len(commit),
        "docstrings": args.docstrings,
        "repos": len(uniq),
        "rows": int(len(y)),
        "folds": args.folds,
        "learned": learned,
        "rules": rule,
        "per_fold": per_fold,
        "by_task_text": by_kind,
        "by_language_code": by_language,
        "calibration_oof": calib,
        "params": PARAMS,
        "rounds": args.rounds,
        "history_dropout": args.history_dropout,
        "docstring_weight": args.docstring_weight,
        "base_weight": args.base_weight,
        "train_share": args.train_share,
    }
    print(f"{'':12}{'Acc@1':>8}{'Acc@3':>8}{'Acc@5':>8}{'Acc@10':>8}{'NDCG@10':>9}")
    for name, m in (("rules", rule), ("learned", learned)):
        print(f"{name:12}{m['acc@1']:8}{m['acc@3']:8}{m['acc@5']:8}{m['acc@10']:8}{m['ndcg@10']:9}")
    for kind, m in by_kind.items():
        print(f"  {kind:12} rules {m['rules']['acc@1']:5} learned {m['learned']['acc@1']:5} "
              f"({m['rules']['tasks']} tasks)")
    for code, m in by_language.items():
        print(f"  language {code:3} rules {m['rules']['acc@1']:5} learned {m['learned']['acc@1']:5} "
              f"({m['rules']['tasks']} tasks)")
    print(f"{len(commit)} commit tasks (+{len(groups) - len(commit)} synthetic tasks) of "
          f"{len(uniq)} repositories, {len(y)} rows, "
          f"{args.folds}-fold by repository; calibration (out of fold): {calib}")
    if args.save_oof:
        np.savez_compressed(args.save_oof, task=tasks, label=y, learned=oof, rules=rules,
                            gold=np.asarray(gold_counts))
    if args.no_export:
        return
    final = fit(lgb, X, y, groups, [groups[i] for i in trainable
                                    for _ in range(args.docstring_weight if is_doc[i] else 1)],
                args.rounds)
    final = float32_thresholds(lgb, final)
    out = Path(args.model)
    out.mkdir(parents=True, exist_ok=True)
    export_onnx(final, names, out / "ranker.onnx")
    gains = final.feature_importance("gain")
    order = np.argsort(-gains)
    total = gains.sum() or 1.0
    with open(out / "importance.tsv", "w") as f:
        f.write("feature\tgain\tshare\n")
        for i in order:
            f.write(f"{names[i]}\t{gains[i]:.1f}\t{gains[i] / total:.4f}\n")
    manifest = {
        "kind": "lightgbm-lambdarank",
        "features": names,
        "calibration": {"a": a, "b": b},
        "trees": final.num_trees(),
        "params": PARAMS,
        "rounds": args.rounds,
        "history_dropout": args.history_dropout,
        "docstring_weight": args.docstring_weight if args.docstrings else 0,
        **({"base": {"feature": "rules_score", "weight": args.base_weight}}
           if args.base_weight else {}),
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    (out / "cv.json").write_text(json.dumps(cv, indent=1) + "\n")
    sample = np.random.default_rng(3).choice(len(X), size=min(len(X), 50_000), replace=False)
    cv["onnx_check"] = check_onnx(final, X[np.sort(sample)], out / "ranker.onnx")
    (out / "cv.json").write_text(json.dumps(cv, indent=1) + "\n")
    write_provenance(out, args, cv, manifest)
    print(f"train: wrote {out} in {time.time() - started:.0f} s", file=sys.stderr)


def merged_provenance(data):
    """The mining provenance of every `data` folder: each repository's tasks summed over
    them, the rest of its entry (head, language) from the first folder that has it, and
    every folder's command."""
    repos, commands = {}, []
    for d in data_dirs(data):
        path = d / "provenance.json"
        prov = json.loads(path.read_text()) if path.exists() else {"repos": {}}
        commands.append(prov.get("command", "scripts/ranker/mine.py"))
        for name, v in prov["repos"].items():
            if "tasks" not in v or not v["tasks"]:
                continue
            if name in repos:
                repos[name] = {**repos[name], "tasks": repos[name]["tasks"] + v["tasks"]}
            else:
                repos[name] = dict(v)
    return {"repos": repos, "command": "`, then `".join(commands)}


def write_provenance(out, args, cv, manifest):
    """PROVENANCE.md: the repositories and commits mined, counts, parameters, the command."""
    prov = merged_provenance(args.data)
    repos = prov["repos"]
    langs = sorted({v["language"] for v in repos.values()})
    lines = [
        "# Provenance of the learned ranker",
        "",
        f"- Trees: LightGBM {manifest['kind']}, {manifest['trees']} trees, "
        f"{len(manifest['features'])} features (`iret_retrieve::ranking::Features`).",
        f"- Trained by `python3 scripts/ranker/train.py {' '.join(sys.argv[1:])}` "
        f"(requirements: `scripts/ranker/requirements.txt`), ONNX export by onnxmltools, "
        "checked against LightGBM's own predictions.",
        f"- Data: `{prov.get('command', 'scripts/ranker/mine.py')}`: "
        f"{len(repos)} repositories in {len(langs)} languages ({', '.join(langs)}), "
        f"{cv['tasks']} distinct tasks ({sum(v['tasks'] for v in repos.values())} as mined, a "
        "bodyless commit's subject copy left out; commit subject+body and subject alone "
        f"-> the non-test source files changed, on the parent's tree), {cv['rows']} candidate rows. "
        "None of `shared/train/excluded-repos.txt`; nothing mined is committed.",
        *([f"- Synthetic tasks on each repository's HEAD: `{cv['docstrings']}`, "
           f"{cv['docstring_tasks']} tasks (`scripts/ranker/symbols.py`: a declared name -> "
           "the files declaring it; `scripts/ranker/docstrings.py`: a docstring's first "
           "sentence -> its file, the docstring removed), trained on as a repository without "
           "history; validation figures above are of the commit tasks, the synthetic tasks' "
           "in `cv.json` (`by_task_text`)."] if cv.get("docstrings") else []),
        f"- Validation: {cv['folds']}-fold cross-validation grouped by repository "
        "(`cv.json`): Acc@1 / @3 / @5 / NDCG@10, rules "
        f"{cv['rules']['acc@1']} / {cv['rules']['acc@3']} / {cv['rules']['acc@5']} / "
        f"{cv['rules']['ndcg@10']}, learned {cv['learned']['acc@1']} / {cv['learned']['acc@3']} / "
        f"{cv['learned']['acc@5']} / {cv['learned']['ndcg@10']}.",
        f"- Calibration (logistic on out-of-fold scores in their task's context): "
        f"w = {[round(w, 4) for w in manifest['calibration']['a']]}, "
        f"b = {manifest['calibration']['b']:.4f}; {cv['calibration_oof']}.",
        f"- Parameters: {json.dumps(manifest['params'])}, {manifest['rounds']} rounds.",
        "",
        "| repository | HEAD | language | tasks mined |",
        "| --- | --- | --- | --- |",
    ]
    for name in sorted(repos):
        v = repos[name]
        lines.append(f"| {name} | {v['head'][:12]} | {v['language']} | {v['tasks']} |")
    (out / "PROVENANCE.md").write_text("\n".join(lines) + "\n")


def export_onnx(booster, names, path):
    import onnx
    from onnxmltools import convert_lightgbm
    from onnxmltools.convert.common.data_types import FloatTensorType

    model = convert_lightgbm(
        booster, initial_types=[("features", FloatTensorType([None, len(names)]))],
        target_opset=15, zipmap=False,
    )
    onnx.save(model, str(path))


def float32_thresholds(lgb, booster):
    """The same trees with every split threshold t lowered to the largest float32 not
    above it. The features are float32, so `x <= t` and `x <= t'` agree for every x and
    LightGBM's predictions do not change; but ONNX Runtime compares in float32, where t
    itself would round to the nearest float32, up onto a feature's value as often as not,
    and send that value the other way."""
    lines = []
    for line in booster.model_to_string().splitlines():
        if line.startswith("tree_sizes="):
            continue  # byte offsets of the trees as written; read in order without them
        if line.startswith("threshold="):
            ts = []
            for t in line[len("threshold="):].split():
                v = float(t)
                f = np.float32(v)
                if float(f) > v:
                    f = np.nextafter(f, np.float32(-np.inf), dtype=np.float32)
                ts.append(repr(float(f)))
            line = "threshold=" + " ".join(ts)
        lines.append(line)
    return lgb.Booster(model_str="\n".join(lines) + "\n")


def check_onnx(booster, X, path):
    """The exported trees score as LightGBM does. ONNX Runtime compares float32 features
    with float32 thresholds and LightGBM with double ones, so a value lying between a
    threshold and its float32 rounding takes the other branch: a few rows may differ by a
    leaf. More than 0.1% of rows off by 1e-4 fails."""
    import onnxruntime as ort

    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    got = sess.run(None, {"features": X})[0].reshape(-1)
    want = booster.predict(X)
    diff = np.abs(got - want)
    off = int((diff > 1e-4).sum())
    if off > 0.001 * len(X):
        sys.exit(f"train: the ONNX export differs from LightGBM on {off} of {len(X)} rows "
                 f"(max |diff| {diff.max():.3g})")
    print(f"train: ONNX export matches LightGBM on {len(X) - off} of {len(X)} rows "
          f"(the rest by at most {diff.max():.3g}: float32 thresholds)", file=sys.stderr)
    return {"rows": len(X), "off": off, "max_diff": float(diff.max())}


if __name__ == "__main__":
    main()
