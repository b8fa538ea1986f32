"""`train`: LightGBM LambdaMART over every kind of task, validated by repository-grouped
cross-validation across kinds (a repository's tasks of every kind sit in one fold), reported
out of fold per kind beside the rules, then trained on everything and exported to ONNX.

Writes into --model: ranker.onnx (input "features": the manifest's features, in its order),
manifest.json (features, calibration, parameters), cv.json (out-of-fold figures per kind and
language, calibration bands), importance.tsv (gain per feature; mean |contribution| per kind),
PROVENANCE.md (kinds, counts, repositories, the command). With --fold-models, each fold's model
too, with the repositories it never saw, for `iret-train evaluate --folds`."""
import json
import sys
import time
from pathlib import Path

import numpy as np

from . import calibration, export, folds
from .kinds import KINDS, parse_weights
from .repos import Excluded
from .tables import load

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
HISTORY = ["history_messages", "history_similar", "history_refs", "history_fixes",
           "history_commits", "history_age"]
# The rules' verdicts: their order and score, and what evaluate's hand-set weights make of the
# signals. Left out by default (`--keep` brings one back).
RULES = ["rules_score", "rules_rank"]
WEIGHTED = ["relevance", "standing", "dispatch_rank", "later_gain", "fused_best"]


def add_arguments(ap):
    ap.add_argument("--model", help="where the trained ranker is written (e.g. models/ranker)")
    ap.add_argument("--kinds", help="comma-separated kinds to read (default: every kind with "
                                    f"tables: {', '.join(KINDS)})")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--seed", type=int, default=7, help="LightGBM's seed and the folds'")
    ap.add_argument("--kind-weight", action="append", metavar="KIND=N",
                    help="train on each task of KIND N times (repeatable; default 1)")
    ap.add_argument("--tune-kind-weights", metavar="KINDS",
                    help="choose these kinds' weights (comma-separated) by cross-validation: "
                         "each in turn tries 1, 2 and 4 copies and keeps the one with the best "
                         "out-of-fold NDCG@10 averaged over every kind (each kind counts once)")
    ap.add_argument("--history-dropout", type=float, default=0.5,
                    help="share of commit tasks also trained on as if the repository had no "
                         "history (an extracted tree, a shallow clone)")
    ap.add_argument("--drop", default=",".join(RULES),
                    help="features the model does not read (default: the rules' verdicts "
                         f"{','.join(RULES)}); 'weighted' adds {','.join(WEIGHTED)}")
    ap.add_argument("--param", action="append", metavar="KEY=VALUE",
                    help="a LightGBM parameter (repeatable), e.g. min_data_in_leaf=5")
    ap.add_argument("--calibrate-kinds",
                    help="the kinds whose held-out scores fit the calibration (comma-separated; "
                         "default: every kind read)")
    ap.add_argument("--strong-recall", type=float, default=0.8,
                    help="the share of held-out targets (each kind counting alike) whose "
                         "relevance reaches 0.7, the band of files to read or change")
    ap.add_argument("--weak-recall", type=float, default=0.98,
                    help="the share of held-out targets whose relevance reaches 0.2 (below it "
                         "the loop excludes a file)")
    ap.add_argument("--no-export", action="store_true", help="cross-validate only")
    ap.add_argument("--fold-models", metavar="DIR",
                    help="also write each fold's model (DIR/fold-K/) with the repositories "
                         "it never saw (heldout.json)")
    ap.add_argument("--save-oof", metavar="FILE", help="the out-of-fold scores (.npz)")


def inputs(names, drop):
    gone = set()
    for name in filter(None, drop.split(",")):
        if name == "weighted":
            gone |= set(WEIGHTED)
        elif name not in names:
            raise SystemExit(f"--drop {name}: no such feature (known: {', '.join(names)})")
        else:
            gone.add(name)
    return [n for n in names if n not in gone]


def without_history(X, names):
    """`X` as a repository without history would give it."""
    Xh = X.copy()
    for name in HISTORY:
        if name in names:
            Xh[:, names.index(name)] = np.nan if name == "history_age" else 0.0
    return Xh


def fit(lgb, t, X, names, train, weights, dropout, rounds, params):
    """A model of the tasks `train` (group indexes), each repeated by its kind's weight;
    commit tasks also, at `dropout`, as without history."""
    rows, sizes, extra = [], [], []
    rng = np.random.default_rng(11)
    for i in train:
        a, b = t.groups[i]
        for _ in range(weights[t.kind[i]]):
            rows.append(np.arange(a, b))
            sizes.append(b - a)
        if t.kind[i] == "commit" and dropout > 0 and rng.random() < dropout:
            extra.append(i)
    sel = np.concatenate(rows) if rows else np.zeros(0, dtype=int)
    Xs, ys = X[sel], t.y[sel]
    if extra:
        ex = np.concatenate([np.arange(*t.groups[i]) for i in extra])
        Xs = np.concatenate([Xs, without_history(X[ex], names)])
        ys = np.concatenate([ys, t.y[ex]])
        sizes += [t.groups[i][1] - t.groups[i][0] for i in extra]
    ds = lgb.Dataset(Xs, ys, group=sizes, free_raw_data=False)
    return lgb.train(params, ds, num_boost_round=rounds)


def cross_validate(lgb, t, X, a, weights, started, quiet=False):
    fold_of = folds.assign(t.repo, t.kind, a.folds, a.seed)
    trainable = t.trainable()
    oof = np.zeros(len(t.y))
    models = []
    for k in range(a.folds):
        if time.time() - started > a.time_limit:
            raise SystemExit("train: time limit reached during cross-validation")
        train = [i for i in trainable if fold_of[t.repo[i]] != k]
        test = [i for i in range(len(t.groups)) if fold_of[t.repo[i]] == k]
        model = fit(lgb, t, X, a.names, train, weights, a.history_dropout, a.rounds, a.params)
        for i in test:
            s = slice(*t.groups[i])
            oof[s] = model.predict(X[s])
        models.append((model, sorted({t.repo[i] for i in test})))
        if not quiet:
            print(f"train: fold {k}: {len(train)} tasks trained, {len(test)} held out "
                  f"({time.time() - started:.0f} s)", file=sys.stderr, flush=True)
    return fold_of, oof, models


def tune_weights(lgb, t, X, a, weights, started):
    """Coordinate ascent over the kinds' weights (1, 2, 4 copies), judged out of fold."""
    present = [k for k in KINDS if (t.kind == k).any()]

    def score(w):
        _, oof, _ = cross_validate(lgb, t, X, a, w, started, quiet=True)
        return float(np.mean([t.side_by_side(oof, t.task_ids({k}))["learned"]["ndcg@10"]
                              for k in present]))

    best = score(weights)
    trail = [{"weights": dict(weights), "mean_ndcg@10": round(best, 4)}]
    for kind in a.tune_kind_weights.split(","):
        if kind not in present:
            raise SystemExit(f"--tune-kind-weights: no tables of kind {kind!r}")
        for copies in (2, 4):
            w = dict(weights, **{kind: copies})
            s = score(w)
            trail.append({"weights": dict(w), "mean_ndcg@10": round(s, 4)})
            print(f"train: weights {w}: mean NDCG@10 {s:.4f}", file=sys.stderr, flush=True)
            if s > best + 1e-4:
                best, weights = s, w
    return weights, trail


def calibration_fit(t, oof, which):
    """The calibration fitted on the held-out scores of the tasks `which`."""
    idx = np.concatenate([np.arange(*t.groups[i]) for i in which])
    regroup, at = [], 0
    for i in which:
        a, b = t.groups[i]
        regroup.append((at, at + b - a))
        at += b - a
    return calibration.fit(oof[idx], t.y[idx], regroup)


def calibration_and_bands(t, oof, which, a):
    """The calibration and the relevance bands fitted on the held-out scores of the tasks
    `which`."""
    ca, cb = calibration_fit(t, oof, which)
    idx = np.concatenate([np.arange(*t.groups[i]) for i in which])
    prob = np.concatenate([calibration.probabilities(oof[x:y], [(0, y - x)], ca, cb)
                           for x, y in (t.groups[i] for i in which)])
    kind = np.concatenate([np.full(t.groups[i][1] - t.groups[i][0], t.kind[i]) for i in which])
    bands = calibration.fit_bands(prob, t.y[idx], kind, a.strong_recall, a.weak_recall)
    return ca, cb, bands


def calibrated_oof(t, oof, fold_of, folds_n, kinds, a):
    """Each fold's relevance from a calibration and bands fitted on the other folds' held-out
    scores (of the tasks of `kinds`): calibration figures no fold fitted on itself."""
    rel = np.zeros(len(t.y))
    for k in range(folds_n):
        other = [i for i in t.task_ids(kinds) if fold_of[t.repo[i]] != k]
        mine = [g for i, g in enumerate(t.groups) if fold_of[t.repo[i]] == k]
        if not other or not mine:
            continue
        ca, cb, bands = calibration_and_bands(t, oof, other, a)
        for x, y in mine:
            p = calibration.probabilities(oof[x:y], [(0, y - x)], ca, cb)
            rel[x:y] = calibration.relevance(p, bands)
    return rel


def run(a):
    import lightgbm as lgb

    started = time.time()
    if a.excluded:
        excluded = Excluded(a.excluded)
    t = load(a.data, a.kinds.split(",") if a.kinds else None)
    if a.excluded:
        mined = {t.repo[i] for i in t.task_ids({"commit", "symbol"})}
        bad = sorted(r for r in mined if excluded.refused(r))
        if bad:
            raise SystemExit(f"train: tables of excluded repositories: {bad}; remove them")
    weights = parse_weights(a.kind_weight)
    a.params = dict(PARAMS, seed=a.seed)
    for spec in a.param or []:
        key, _, value = spec.partition("=")
        if key not in PARAMS:
            raise SystemExit(f"--param {spec!r}: not one of {', '.join(PARAMS)}")
        a.params[key] = type(PARAMS[key])(value) if not isinstance(PARAMS[key], bool) \
            else value.lower() in ("1", "true")
    names = inputs(t.names, a.drop)
    cols = [t.names.index(n) for n in names]
    X = t.X[:, cols]
    # Symbol tasks' trees are root commits: read as no history at all.
    for i in np.nonzero(t.kind == "symbol")[0]:
        s = slice(*t.groups[i])
        X[s] = without_history(X[s], names)
    a.names = names
    trail = None
    if a.tune_kind_weights:
        weights, trail = tune_weights(lgb, t, X, a, weights, started)
    fold_of, oof, models = cross_validate(lgb, t, X, a, weights, started)
    by_kind = {k: t.side_by_side(oof, t.task_ids({k})) for k in KINDS if (t.kind == k).any()}
    lang = t.names.index("language")
    by_language = {}
    for k in by_kind:
        langs = {}
        for i in t.task_ids({k}):
            langs.setdefault(int(t.X[t.groups[i][0], lang]), []).append(i)
        by_language[k] = {code: t.side_by_side(oof, idx) for code, idx in sorted(langs.items())}
    calib_kinds = set(a.calibrate_kinds.split(",")) if a.calibrate_kinds else None
    prob = calibrated_oof(t, oof, fold_of, a.folds, calib_kinds, a)
    bands = {}
    for k in by_kind:
        rows = np.concatenate([np.arange(*t.groups[i]) for i in t.task_ids({k})])
        bands[k] = calibration.bands(prob[rows], t.y[rows])
    cv = {
        "kinds": {k: int((t.kind == k).sum()) for k in by_kind},
        "repos": len(set(t.repo)),
        "rows": int(len(t.y)),
        "folds": a.folds,
        "features": names,
        "kind_weight": weights,
        "kind_weight_search": trail,
        "history_dropout": a.history_dropout,
        "by_kind": by_kind,
        "by_language_code": by_language,
        "calibration_oof": bands,
        "params": a.params,
        "rounds": a.rounds,
        "seconds_cv": round(time.time() - started, 1),
    }
    print_table(cv)
    if a.save_oof:
        np.savez_compressed(a.save_oof, task=t.tasks, label=t.y, learned=oof, rules=t.rules(),
                            prob=prob)
    ca, cb, bands_fit = calibration_and_bands(t, oof, t.task_ids(calib_kinds), a)
    cv["bands"] = bands_fit
    cv["calibrated_on"] = sorted(calib_kinds) if calib_kinds else "every kind"
    if a.fold_models:
        for k, (model, held) in enumerate(models):
            out = Path(a.fold_models) / f"fold-{k}"
            write_model(lgb, model, names, out, (ca, cb, bands_fit), a, X, check_rows=5000)
            (out / "heldout.json").write_text(json.dumps(held, indent=1))
    if a.no_export or not a.model:
        return cv
    final = fit(lgb, t, X, names, t.trainable(), weights, a.history_dropout, a.rounds, a.params)
    out = Path(a.model)
    cv["onnx_check"] = write_model(lgb, final, names, out, (ca, cb, bands_fit), a, X, check_rows=50_000)
    write_importance(final, names, X, t, out)
    (out / "cv.json").write_text(json.dumps(cv, indent=1) + "\n")
    write_provenance(out, a, cv, t, command(a))
    print(f"train: wrote {out} in {time.time() - started:.0f} s", file=sys.stderr)
    return cv


def write_model(lgb, booster, names, out, calib, a, X, check_rows):
    ca, cb, bands = calib
    booster = export.float32_thresholds(lgb, booster)
    out.mkdir(parents=True, exist_ok=True)
    export.to_onnx(booster, len(names), out / "ranker.onnx")
    manifest = {
        "kind": "lightgbm-lambdarank",
        "features": names,
        "calibration": {"a": ca, "b": cb, "bands": bands},
        "trees": booster.num_trees(),
        "params": a.params,
        "rounds": a.rounds,
        "history_dropout": a.history_dropout,
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    pick = np.random.default_rng(3).choice(len(X), size=min(len(X), check_rows), replace=False)
    return export.check(booster, X[np.sort(pick)], out / "ranker.onnx")


def write_importance(booster, names, X, t, out):
    """Gain per feature, and per kind the mean |contribution| of each feature to the score of
    that kind's candidates (LightGBM's pred_contrib, on up to 20,000 rows a kind)."""
    gains = booster.feature_importance("gain")
    total = gains.sum() or 1.0
    kinds = [k for k in KINDS if (t.kind == k).any()]
    contrib = {}
    for k in kinds:
        rows = np.concatenate([np.arange(*t.groups[i]) for i in t.task_ids({k})])
        rows = np.random.default_rng(5).choice(rows, size=min(len(rows), 20_000), replace=False)
        c = np.abs(booster.predict(X[np.sort(rows)], pred_contrib=True)[:, :-1]).mean(axis=0)
        contrib[k] = c / (c.sum() or 1.0)
    with open(out / "importance.tsv", "w") as f:
        f.write("feature\tgain\tshare\t" + "\t".join(f"{k}_share" for k in kinds) + "\n")
        for i in np.argsort(-gains):
            f.write(f"{names[i]}\t{gains[i]:.1f}\t{gains[i] / total:.4f}\t"
                    + "\t".join(f"{contrib[k][i]:.4f}" for k in kinds) + "\n")


def print_table(cv):
    print(f"{'kind':10}{'tasks':>7}  {'Acc@1':>13}{'Acc@5':>13}{'NDCG@10':>17}")
    for k, m in cv["by_kind"].items():
        r, l = m["rules"], m["learned"]
        print(f"{k:10}{r['tasks']:7}  {r['acc@1']:5} -> {l['acc@1']:5}{r['acc@5']:6} -> "
              f"{l['acc@5']:5}{r['ndcg@10']:8} -> {l['ndcg@10']:6}")
    for k, b in cv["calibration_oof"].items():
        print(f"  calibration {k}: {b}")


def command(a):
    """The command as run, the data folder written DATA (a machine's folder names nothing)."""
    return "python -m iret_training " + " ".join(sys.argv[1:]).replace(str(a.data), "DATA")


def heads(data):
    """{repository: the commit its tasks were mined up to} from the mining provenance."""
    out = {}
    for kind in ("commit", "symbol"):
        path = Path(data) / "tables" / kind / "provenance.json"
        if path.exists():
            for name, v in json.loads(path.read_text()).get("repos", {}).items():
                out.setdefault(v.get("repo", name), v.get("head", ""))
    return out


def write_provenance(out, a, cv, t, cmd):
    head = heads(a.data)
    repos = {}
    for i in range(len(t.groups)):
        repos.setdefault(t.repo[i], {}).setdefault(t.kind[i], 0)
        repos[t.repo[i]][t.kind[i]] += 1
    kinds = [k for k in KINDS if k in cv["kinds"]]
    lines = [
        "# Provenance of the learned ranker",
        "",
        f"- Trees: LightGBM lambdarank, {cv['rounds']} rounds, {len(cv['features'])} features "
        f"(`iret_retrieve::ranking::Features`, by name): {', '.join(cv['features'])}.",
        f"- Trained by `{cmd}` (the training tool in "
        "`training/`, pinned in `training/requirements.txt`); ONNX export checked against "
        f"LightGBM on {cv['onnx_check']['rows']} rows ({cv['onnx_check']['off']} off).",
        "- Tasks by kind: " + ", ".join(f"{k} {cv['kinds'][k]} ({KINDS[k]})" for k in kinds) + ".",
        f"- Kind weights (copies of each task in training): {cv['kind_weight']}; history dropout "
        f"{cv['history_dropout']}; LightGBM parameters {json.dumps(cv['params'])}.",
        f"- Calibration fitted on the held-out scores of {cv.get('calibrated_on', 'every kind')}, "
        f"its probability placed in the relevance bands (0.7 where {a.strong_recall:.0%} of "
        f"held-out targets reach, 0.2 where {a.weak_recall:.0%} do, each kind alike): "
        f"{json.dumps(cv['bands'])}; "
        f"out of fold, of the candidates it scores >= 0.7, the share that are gold and the "
        f"share of gold reaching 0.7, per kind: {json.dumps(cv['calibration_oof'])}.",
        f"- Checked at training time: no repository of `{Path(a.excluded).name if a.excluded else '-'}`"
        " among the mined tables (commit, symbol); the benchmark sets' own repositories train "
        "only inside repository-grouped folds.",
        f"- Validation: {cv['folds']}-fold cross-validation grouped by repository across every "
        "kind (`cv.json`, out of fold):",
        "",
        "| kind | tasks | Acc@1 rules → learned | Acc@5 rules → learned | NDCG@10 rules → learned |",
        "| --- | --- | --- | --- | --- |",
    ]
    for k in kinds:
        r, l = cv["by_kind"][k]["rules"], cv["by_kind"][k]["learned"]
        lines.append(f"| {k} | {r['tasks']} | {r['acc@1']} → {l['acc@1']} | {r['acc@5']} → "
                     f"{l['acc@5']} | {r['ndcg@10']} → {l['ndcg@10']} |")
    lines += ["", "| repository | mined up to | tasks by kind |", "| --- | --- | --- |"]
    for name in sorted(repos):
        kinds_ = ", ".join(f"{k} {n}" for k, n in sorted(repos[name].items()))
        lines.append(f"| {name} | {head.get(name, '')[:12] or 'benchmark set'} | {kinds_} |")
    (out / "PROVENANCE.md").write_text("\n".join(lines) + "\n")
