#!/usr/bin/env python3
"""Try a family of candidate features before building it into iret: the same repository-held-out
cross-validation as train.py, on the mined tables, with and without the extra columns, side by
side. Nothing is written; a family that pays is then computed by iret itself (one code for
training and serving) and mined again.

Families:
  listwise  each main signal relative to its task: its gap below the task's best, its rank
  affinity  task word -> path token affinity learned across repositories (a translation table:
            how much a word of the message raises the chance that a candidate whose path holds
            the token is changed), cross-fitted: a fold's values come from tables of the
            other folds only. Needs the task texts (scripts/encoder/pairs.py's files).

    python3 scripts/ranker/trial.py --data /work/cache/mine/data --family listwise
    python3 scripts/ranker/trial.py --family affinity --texts /work/cache/pairs
"""
import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import train as T  # noqa: E402

RELATIVE = ["cos_best", "cos_top3", "bm25_best", "fused_best", "coherence", "history_similar",
            "history_messages", "rules_score", "relevance", "eval_similarity", "name_share",
            "body_share", "later_gain", "chunk_hits", "spelled", "path_words"]
STOP = set("the and for with from this that not are was were has have had but into when then "
           "than use used using add adds added fix fixes fixed make makes update updates updated "
           "remove removes removed change changes changed also all any can its of to in on a an "
           "is be by as at or if we you our new now more some support allow should would could "
           "will".split())
SMOOTH = 20.0


def listwise(X, names, groups):
    cols = []
    for f in RELATIVE:
        j = names.index(f)
        gap = np.zeros(len(X), np.float32)
        rank = np.zeros(len(X), np.float32)
        for a, b in groups:
            v = np.nan_to_num(X[a:b, j], nan=-1e9)
            gap[a:b] = v - v.max()
            rank[a:b] = np.argsort(np.argsort(-v, kind="stable"), kind="stable") + 1
        cols += [gap, rank]
    return np.column_stack(cols).astype(np.float32)


def words(s):
    out = []
    for part in re.findall(r"[A-Za-z][A-Za-z0-9]*", s):
        for w in re.findall(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+", part):
            w = w.lower()
            if len(w) >= 3 and w not in STOP:
                for suf in ("ing", "ed", "es", "s"):
                    if len(w) > len(suf) + 3 and w.endswith(suf):
                        w = w[: -len(suf)]
                        break
                out.append(w)
    return sorted(set(out))


class Affinity:
    """Counts per fold, so that any set of folds' table is a sum."""

    def __init__(self, paths, texts_dir, tasks, groups, y, fold_of_group):
        text = {}
        for p in Path(texts_dir).glob("*.jsonl"):
            for line in open(p):
                d = json.loads(line)
                text[d["name"]] = d["text"]
        q_words = {i: words(text[tasks[a]]) for i, (a, _) in enumerate(groups) if tasks[a] in text}
        p_words = [words(p) for p in paths]
        qdf = Counter(w for ws in q_words.values() for w in ws)
        pdf = Counter(w for ws in p_words for w in ws)
        qv = {w: j for j, w in enumerate(w for w, c in qdf.items() if c >= 20)}
        pv = {w: j for j, w in enumerate(w for w, c in pdf.items() if c >= 50)}
        self.q = {i: np.asarray([qv[w] for w in ws if w in qv], dtype=np.int64)
                  for i, ws in q_words.items()}
        self.p = [np.asarray([pv[w] for w in ws if w in pv], dtype=np.int64) for ws in p_words]
        self.groups, self.y = groups, y
        folds = sorted(set(fold_of_group))
        self.counts = {k: self._count([i for i in self.q if fold_of_group[i] == k], len(qv), len(pv))
                       for k in folds}
        self.with_text = len(self.q)

    def _count(self, idx, nq, np_):
        g, n = np.zeros((nq, np_), np.float32), np.zeros((nq, np_), np.float32)
        gp, npp = np.zeros(np_), np.zeros(np_)
        for i in idx:
            a, b = self.groups[i]
            q = self.q[i]
            for r in range(a, b):
                p = self.p[r]
                if not len(p):
                    continue
                npp[p] += 1
                gp[p] += self.y[r]
                if len(q):
                    n[np.ix_(q, p)] += 1
                    if self.y[r]:
                        g[np.ix_(q, p)] += 1
        return g, n, gp, npp

    def table(self, without):
        keep = [c for k, c in self.counts.items() if k not in without]
        g, n, gp, npp = (sum(c[j] for c in keep) for j in range(4))
        r0 = gp.sum() / max(1.0, npp.sum())
        prior = (gp + SMOOTH * r0) / (npp + SMOOTH)
        lift = np.log((g + SMOOTH * prior[None, :]) / (n + SMOOTH) / prior[None, :])
        return lift.astype(np.float32), np.log(prior / r0).astype(np.float32)

    def columns(self, idx, table, out):
        """Best lift, summed positive lift, and the path's own prior, for `idx`'s rows."""
        lift, plift = table
        for i in idx:
            a, b = self.groups[i]
            q = self.q.get(i, np.zeros(0, np.int64))
            for r in range(a, b):
                p = self.p[r]
                if len(p):
                    out[r, 2] = plift[p].max()
                    if len(q):
                        s = lift[np.ix_(q, p)]
                        out[r, 0] = s.max()
                        out[r, 1] = np.clip(s, 0, None).sum() / np.sqrt(len(q))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", action="append", help="a folder of mined tables; repeat for several")
    ap.add_argument("--family", choices=["listwise", "affinity"], required=True)
    ap.add_argument("--texts", default="/work/cache/pairs")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--history-dropout", type=float, default=0.5)
    args = ap.parse_args()
    import lightgbm as lgb

    T.HISTORY_DROPOUT = args.history_dropout
    X, y, tasks, repos, names, paths = T.load(args.data, with_paths=True)
    groups = T.groups_of(tasks)
    gold = T.gold_counts_of(args.data, groups, tasks)
    group_repo = [repos[a] for a, _ in groups]
    uniq = sorted(set(group_repo))
    rng = np.random.default_rng(7)
    rng.shuffle(uniq)
    fold_of = {r: i % args.folds for i, r in enumerate(uniq)}
    fold_of_group = [fold_of[r] for r in group_repo]
    trainable = [i for i, (a, b) in enumerate(groups) if y[a:b].any()]
    aff = None
    if args.family == "affinity":
        aff = Affinity(paths, args.texts, tasks, groups, y, fold_of_group)
        # Only tasks with a text are compared (the others would have zeros both ways).
        trainable = [i for i in trainable if i in aff.q]
    scored = sorted(aff.q) if aff else list(range(len(groups)))
    results = {}
    relative = listwise(X, names, groups) if args.family == "listwise" else None
    for with_extra in (False, True):
        oof = np.zeros(len(y))
        for k in range(args.folds):
            if relative is not None:
                extra = relative
            else:
                # Cross-fitted: a training fold j's values from the tables without j and k.
                extra = np.zeros((len(X), 3), np.float32)
                for j in range(args.folds):
                    idx = [i for i in aff.q if fold_of_group[i] == j]
                    aff.columns(idx, aff.table({j, k} if j != k else {k}), extra)
            Xk = np.concatenate([X, extra if with_extra else np.zeros_like(extra)], axis=1)
            T.NAMES[:] = names + [f"extra{c}" for c in range(extra.shape[1])]
            model = T.fit(lgb, Xk, y, groups, [groups[i] for i in trainable
                                                if fold_of_group[i] != k], T.ROUNDS)
            for i in scored:
                if fold_of_group[i] == k:
                    a, b = groups[i]
                    oof[a:b] = model.predict(Xk[a:b])
        results["with" if with_extra else "without"] = T.metrics(
            [groups[i] for i in scored], y, oof, [gold[i] for i in scored])
        print(f"trial: {args.family} {'with' if with_extra else 'without'}: "
              f"{results['with' if with_extra else 'without']}", file=sys.stderr, flush=True)
    rules = T.metrics([groups[i] for i in scored], y, -X[:, names.index("rules_rank")],
                      [gold[i] for i in scored])
    print(f"{args.family}, {len(scored)} tasks, {args.folds}-fold by repository")
    for name, m in (("rules", rules), ("learned", results["without"]),
                    (f"learned + {args.family}", results["with"])):
        print(f"  {name:24} Acc@1 {m['acc@1']:5} Acc@5 {m['acc@5']:5} NDCG@10 {m['ndcg@10']}")


if __name__ == "__main__":
    main()
