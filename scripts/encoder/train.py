#!/usr/bin/env python3
"""Train iret's query map: a linear map on the shipped model's query vector (documents keep
their vectors, so no index is embedded again), learned from the pairs
`scripts/encoder/pairs.py` writes: a task should land near the chunks of the files its
commit changed, above the chunks the shipped model ranks high that it did not touch.

    q' = normalise(W q + b)    W starts at the identity, b at zero

Loss, per task: softmax cross-entropy over the files of its pool (the gold files' chunks,
the shipped top 200, 100 at random), a file scored by its best chunk, q'·c / temperature;
the gold files together are the target. Adam, decay toward the identity. Tasks whose gold
file the shipped model does not place in its top 50 files are left out of training (SweLoc's
filter), never out of validation.

Validated by repository (5 folds, grouped by repository as the training tool's folds are): the dense
leg's Recall@10, Acc@1 and Acc@5 over files, shipped against tuned, within each task's pool.
Then trained on every repository and written to --model (default models/query-map/):
map.bin (W row-major, then b; little-endian f32), manifest.json, cv.json, PROVENANCE.md.

    python3 scripts/encoder/train.py --pairs PAIRS --mined DATA --model models/query-map
"""
import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def share(names, fraction, seed=1):
    """A seeded `fraction` of `names` (all of them at 1): the repositories a learning curve
    trains on."""
    if fraction >= 1:
        return names
    names = list(names)
    np.random.default_rng(seed).shuffle(names)
    return names[: max(1, round(fraction * len(names)))]


class Task:
    __slots__ = ("repo", "src", "name", "text", "q", "rows", "file_of", "starts", "gold", "shipped_rank")


def read_vectors(path, dims):
    raw = np.fromfile(path, dtype=np.uint8)
    rec = 16 + 2 * dims
    raw = raw.reshape(-1, rec)
    keys = [bytes(k).hex() for k in raw[:, :16]]
    vecs = raw[:, 16:].copy().view("<f2").reshape(-1, dims)
    return {k: i for i, k in enumerate(keys)}, vecs


def load(pairs_dirs, dims=384):
    """The vector matrix (f16) of each pairs file, and the tasks of each repository."""
    mats, repos = {}, {}
    if isinstance(pairs_dirs, (str, Path)):
        pairs_dirs = [pairs_dirs]
    paths = sorted(p for d in pairs_dirs for p in Path(d).glob("*.jsonl"))
    for path in paths:
        if ".part" in path.name:
            continue
        vec = Path(f"{path}.vec")
        if not vec.exists():
            continue
        index, mat = read_vectors(vec, dims)
        tasks = []
        texts = {}
        for line in open(path):
            d = json.loads(line)
            texts[d["name"]] = d["text"]
            # A commit without a body was written twice, `NAME~subject` the same text as
            # `NAME` (before `iret bench` made it one task): each text counts once.
            twin = d["name"].removesuffix("~subject")
            if twin != d["name"] and texts.get(twin) == d["text"]:
                continue
            if not d["chunks"] or not d["gold"]:
                continue
            t = Task()
            t.repo, t.src, t.name, t.text = d["repo"], path.name, d["name"], d["text"]
            t.q = mat[index[d["query"]]].astype(np.float32)
            rows = np.asarray([index[k] for k, _, _ in d["chunks"]], dtype=np.int64)
            files = np.asarray([f for _, f, _ in d["chunks"]], dtype=np.int64)
            order = np.argsort(files, kind="stable")
            t.rows, t.file_of = rows[order], files[order]
            t.starts = np.flatnonzero(np.r_[True, t.file_of[1:] != t.file_of[:-1]])
            present = t.file_of[t.starts]
            gold = {i for i, p in enumerate(d["files"]) if p in d["gold"]}
            t.gold = np.asarray([f in gold for f in present])
            if not t.gold.any():
                continue
            shipped = np.asarray([s for _, _, s in d["chunks"]], dtype=np.float32)[order]
            best = np.maximum.reduceat(shipped, t.starts)
            t.shipped_rank = rank_of_first_gold(best, t.gold)
            tasks.append(t)
        mats[path.name] = mat
        for t in tasks:
            repos.setdefault(t.repo, []).append(t)
    return mats, repos


def rank_of_first_gold(file_scores, gold):
    order = np.argsort(-file_scores, kind="stable")
    return int(np.flatnonzero(gold[order])[0]) + 1


def encode(W, b, q):
    u = W @ q + b
    n = np.linalg.norm(u)
    return u / n, u, n


def file_scores(mat, t, qv):
    s = mat[t.rows].astype(np.float32) @ qv
    return s, np.maximum.reduceat(s, t.starts)


def step_grad(W, b, mat, t, temp):
    """Loss and gradients of one task."""
    qv, u, n = encode(W, b, t.q)
    C = mat[t.rows].astype(np.float32)
    s = C @ qv
    S = np.maximum.reduceat(s, t.starts) / temp
    m = S.max()
    p = np.exp(S - m)
    p /= p.sum()
    g = np.where(t.gold, np.exp(S - m), 0.0)
    loss = -np.log(g.sum() / np.exp(S - m).sum())
    g /= g.sum()
    dS = (p - g) / temp
    # Each file's gradient goes to its best chunk.
    best = np.maximum.reduceat(s, t.starts)
    seg = np.repeat(np.arange(len(t.starts)), np.diff(np.r_[t.starts, len(s)]))
    is_best = s >= best[seg]
    ds = np.where(is_best, dS[seg], 0.0)
    dq = C.T @ ds
    du = (dq - qv * (qv @ dq)) / n
    return loss, np.outer(du, t.q), du


def metrics(mat_of, tasks, W, b):
    return metrics_of(mat_of, tasks, (encode(W, b, t.q)[0] for t in tasks))


def metrics_of(mat_of, tasks, queries):
    """Recall@10, Acc@1 and Acc@5 of each task's files ranked for its query vector."""
    r10 = a1 = a5 = 0.0
    for t, qv in zip(tasks, queries):
        _, S = file_scores(mat_of[t.src], t, qv)
        order = np.argsort(-S, kind="stable")
        ranks = np.flatnonzero(t.gold[order]) + 1
        r10 += (ranks <= 10).sum() / len(ranks)
        a1 += float(ranks.max() <= 1)
        a5 += float(ranks.max() <= 5)
    n = max(1, len(tasks))
    return {"recall10": round(float(100 * r10 / n), 1), "acc1": round(100 * a1 / n, 1),
            "acc5": round(100 * a5 / n, 1), "tasks": len(tasks)}


def train(mat_of, tasks, args, dims, log=None, deadline=None):
    rng = np.random.default_rng(args.seed)
    W, b = np.eye(dims, dtype=np.float64), np.zeros(dims)
    mW, vW, mb, vb = np.zeros_like(W), np.zeros_like(W), np.zeros_like(b), np.zeros_like(b)
    step = 0
    eye = np.eye(dims)
    for epoch in range(args.epochs):
        order = rng.permutation(len(tasks))
        total, started = 0.0, time.time()
        for s in range(0, len(order), args.batch):
            gW, gb = np.zeros_like(W), np.zeros_like(b)
            batch = order[s:s + args.batch]
            for i in batch:
                t = tasks[i]
                loss, dW, db = step_grad(W, b, mat_of[t.src], t, args.temperature)
                total += loss
                gW += dW
                gb += db
            gW = gW / len(batch) + args.decay * (W - eye)
            gb = gb / len(batch) + args.decay * b
            step += 1
            lr = args.lr
            for p, g, m, v in ((W, gW, mW, vW), (b, gb, mb, vb)):
                m *= 0.9
                m += 0.1 * g
                v *= 0.999
                v += 0.001 * g * g
                p -= lr * (m / (1 - 0.9 ** step)) / (np.sqrt(v / (1 - 0.999 ** step)) + 1e-8)
        rate = len(order) / max(1e-9, time.time() - started)
        if log is not None:
            log(epoch, total / max(1, len(order)), rate, W, b)
        if deadline and time.time() > deadline:
            break
    return W.astype(np.float32), b.astype(np.float32)


def folds_of(repos, k):
    uniq = sorted(repos)
    rng = np.random.default_rng(7)
    rng.shuffle(uniq)
    return {r: i % k for i, r in enumerate(uniq)}


def trainable(tasks, top):
    return [t for t in tasks if t.shipped_rank <= top]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", action="append", required=True,
                    help="a folder of pairs (repeatable); validation "
                         "figures count commit tasks only, so docstring pairs "
                         "(pairs.py --docstrings) can be added to training alone")
    ap.add_argument("--model", default=str(ROOT / "models/query-map"))
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--decay", type=float, default=1e-3, help="pull toward the identity")
    ap.add_argument("--temperature", type=float, default=0.05)
    ap.add_argument("--filter-top", type=int, default=50, help="SweLoc's filter: shipped top k files")
    ap.add_argument("--train-share", type=float, default=1.0,
                    help="train on this share of each fold's training repositories (a "
                         "learning curve: how the held-out figures grow with the data)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--cv-only", action="store_true", help="validate, write nothing")
    ap.add_argument("--hold-out-fold", type=int, default=None,
                    help="skip validation; train on every fold but this one and list its "
                         "repositories in heldout.txt (to measure the map through iret bench)")
    ap.add_argument("--time-limit", type=float, default=1800, help="seconds for the whole run")
    ap.add_argument("--mined", type=Path, default=None,
                    help="the training tool's mined data folder: its provenance.json names the "
                         "mined repositories and commits in the map's PROVENANCE (without it, "
                         "PROVENANCE says they were not recorded)")
    args = ap.parse_args()
    deadline = time.time() + args.time_limit

    started = time.time()
    mat_of, repos = load(args.pairs)
    if not repos:
        sys.exit(f"train: no pairs in {args.pairs}: run scripts/encoder/pairs.py first")
    dims = next(iter(mat_of.values())).shape[1]
    n_tasks = sum(len(t) for t in repos.values())
    print(f"train: {len(repos)} repositories, {n_tasks} tasks, loaded in "
          f"{time.time() - started:.0f} s", file=sys.stderr)

    fold_of = folds_of(repos, args.folds)
    eye, zero = np.eye(dims, dtype=np.float32), np.zeros(dims, dtype=np.float32)
    per_fold, curves = [], []
    for k in range(args.folds if args.hold_out_fold is None else 0):
        train_t = [t for r in share(sorted(r for r in repos if fold_of[r] != k), args.train_share)
                   for t in trainable(repos[r], args.filter_top)]
        test_t = [t for r, ts in repos.items() if fold_of[r] == k for t in ts
                  if not t.name.startswith("doc-")]
        curve = []

        def log(epoch, loss, rate, W, b, test_t=test_t, curve=curve, k=k):
            m = metrics(mat_of, test_t, W.astype(np.float32), b.astype(np.float32))
            curve.append({"epoch": epoch + 1, "loss": round(loss, 4), "tasks_per_s": round(rate, 1), **m})
            print(f"fold {k} epoch {epoch + 1}: loss {loss:.4f}, {rate:.0f} tasks/s, held-out {m}",
                  file=sys.stderr, flush=True)

        W, b = train(mat_of, train_t, args, dims, log, deadline)
        shipped = metrics(mat_of, test_t, eye, zero)
        tuned = metrics(mat_of, test_t, W, b)
        per_fold.append({"fold": k, "train_tasks": len(train_t), "shipped": shipped, "tuned": tuned})
        curves.append(curve)
        print(f"fold {k}: shipped {shipped} tuned {tuned}", file=sys.stderr, flush=True)
    def pooled(key):
        n = max(1, sum(f[key]["tasks"] for f in per_fold))
        return {m: round(sum(f[key][m] * f[key]["tasks"] for f in per_fold) / n, 1)
                for m in ("recall10", "acc1", "acc5")} | {"tasks": n}
    cv = {"folds": args.folds, "shipped": pooled("shipped"), "tuned": pooled("tuned"),
          "per_fold": per_fold, "curves": curves}
    if per_fold:
        print(f"cross-validation by repository: shipped {cv['shipped']} tuned {cv['tuned']}",
              file=sys.stderr)
    if args.cv_only:
        return
    kept = [r for r in repos if fold_of[r] != args.hold_out_fold]
    all_t = [t for r in kept for t in trainable(repos[r], args.filter_top)]
    W, b = train(mat_of, all_t, args, dims)
    out = Path(args.model)
    out.mkdir(parents=True, exist_ok=True)
    blob = np.concatenate([W.reshape(-1), b]).astype("<f4").tobytes()
    (out / "map.bin").write_bytes(blob)
    manifest = {
        "kind": "linear",
        "dims": dims,
        "base_model": base_model_id(),
        "file": "map.bin",
        "sha256": hashlib.sha256(blob).hexdigest(),
        "temperature": args.temperature,
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    if args.hold_out_fold is None:
        (out / "cv.json").write_text(json.dumps(cv, indent=1) + "\n")
    else:
        held = sorted(r for r in repos if fold_of[r] == args.hold_out_fold)
        (out / "heldout.txt").write_text("\n".join(held) + "\n")
    write_provenance(out, args, repos, cv, len(all_t), time.time() - started)
    print(f"train: wrote {out} in {time.time() - started:.0f} s", file=sys.stderr)


def per_fold_ran(cv):
    return bool(cv["per_fold"])


def base_model_id():
    """The shipped model's id as iret reports it (OnnxEmbedder: `id@` the ONNX file's hash)."""
    m = json.loads((ROOT / "models/all-minilm-l6-v2/manifest.json").read_text())
    return f"{m['id']}@{m['onnx_sha256'][:12]}"


def write_provenance(out, args, repos, cv, n_train, seconds):
    mined = {}
    if args.mined is not None:
        prov = args.mined / "provenance.json"
        if not prov.exists():
            sys.exit(f"train: --mined {args.mined} holds no provenance.json")
        mined = json.loads(prov.read_text()).get("repos", {})
    lines = [
        "# Query map: provenance",
        "",
        "A linear map on the shipped model's query vector (`q' = normalise(W q + b)`), trained",
        "by `scripts/encoder/train.py` on pairs `scripts/encoder/pairs.py` wrote from the",
        "histories the training tool's `mine` mined (none of `shared/train/excluded-repos.txt`).",
        "No fetched code is in this folder: W and b only.",
        "",
        f"- Command: `python3 scripts/encoder/train.py {' '.join(sys.argv[1:])}` ({seconds:.0f} s)",
        f"- Parameters: epochs {args.epochs}, batch {args.batch}, lr {args.lr}, decay toward the "
        f"identity {args.decay}, temperature {args.temperature}, filter: a gold file in the "
        f"shipped top {args.filter_top}",
        f"- Trained on {n_train} tasks of {len(repos)} repositories.",
        f"- Validation ({cv['folds']}-fold by repository, the vector leg within each task's "
        f"pool, {cv['shipped']['tasks']} tasks): Recall@10 {cv['shipped']['recall10']} → "
        f"{cv['tuned']['recall10']}, Acc@1 {cv['shipped']['acc1']} → {cv['tuned']['acc1']}, "
        f"Acc@5 {cv['shipped']['acc5']} → {cv['tuned']['acc5']} (shipped → tuned; cv.json)"
        if per_fold_ran(cv) else "- Validation: none in this run (--hold-out-fold)",
        "",
        "| repository | HEAD | tasks |",
        "| --- | --- | --- |",
    ]
    for r, ts in sorted(repos.items()):
        head = mined.get(r, {}).get("head", "")
        lines.append(f"| {r} | {head} | {len(ts)} |")
    (out / "PROVENANCE.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
