#!/usr/bin/env python3
"""Does adapting the learned ranker to one repository's own history pay? (issue #45, item 5)

Measured on a split in time, per repository: the shipped recipe is trained by repository-held-out
cross-validation (train.py's folds, so a repository's global scores come from a model that never
saw it); then each repository's older half of commits trains a small correction boosted from
those global scores (LightGBM lambdarank, `init_score` = the global score), and its newer half is
where rules, global and adapted are compared. Prints one row per variant; writes nothing.

    python3 scripts/ranker/adapt.py --data /work/cache/mine/data --history-dropout 0.5
"""
import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import train as T  # noqa: E402

# (trees, leaves, learning rate, min rows a leaf): small corrections, a repository's older
# half holds some 40 commits.
VARIANTS = {"10 trees, 4 leaves": (10, 4, 0.1, 20),
            "30 trees, 4 leaves": (30, 4, 0.05, 20),
            "20 trees, 8 leaves": (20, 8, 0.1, 10)}


def held_out_scores(lgb, X, y, groups, group_repo, folds, rounds):
    """Every task's scores by a model trained on the other folds' repositories."""
    uniq = sorted(set(group_repo))
    rng = np.random.default_rng(7)
    rng.shuffle(uniq)
    fold_of = {r: i % folds for i, r in enumerate(uniq)}
    oof = np.zeros(len(y))
    for k in range(folds):
        train_g = [g for g, r in zip(groups, group_repo)
                   if fold_of[r] != k and y[g[0]:g[1]].any()]
        model = T.fit(lgb, X, y, groups, train_g, rounds)
        for (a, b), r in zip(groups, group_repo):
            if fold_of[r] == k:
                oof[a:b] = model.predict(X[a:b])
        print(f"adapt: fold {k} scored", file=sys.stderr, flush=True)
    return oof


def split_in_time(tasks, groups, idx):
    """A repository's tasks (oldest first, as mined) split at the middle commit: the
    older half's trainable tasks, the newer half's tasks."""
    commits = []
    for i in idx:
        c = tasks[groups[i][0]].removesuffix("~subject")
        if not commits or commits[-1] != c:
            commits.append(c)
    older = set(commits[: len(commits) // 2])
    of = [i for i in idx if tasks[groups[i][0]].removesuffix("~subject") in older]
    return of, [i for i in idx if i not in set(of)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", action="append", help="a folder of mined tables; repeat for several")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=T.ROUNDS)
    ap.add_argument("--history-dropout", type=float, default=0.5)
    args = ap.parse_args()
    import lightgbm as lgb

    T.HISTORY_DROPOUT = args.history_dropout
    X, y, tasks, repos, names = T.load(args.data)
    T.NAMES[:] = names
    groups = T.groups_of(tasks)
    gold = T.gold_counts_of(args.data, groups, tasks)
    group_repo = [repos[a] for a, _ in groups]
    oof = held_out_scores(lgb, X, y, groups, group_repo, args.folds, args.rounds)
    adapted = {name: oof.copy() for name in VARIANTS}
    by_repo = {}
    for i, r in enumerate(group_repo):
        by_repo.setdefault(r, []).append(i)
    newer_all = []
    for idx in by_repo.values():
        older, newer = split_in_time(tasks, groups, idx)
        newer_all += newer
        older = [i for i in older if y[groups[i][0]:groups[i][1]].any()]
        if len(older) < 10:
            continue
        rows = np.concatenate([np.arange(*groups[i]) for i in older])
        sizes = [groups[i][1] - groups[i][0] for i in older]
        for name, (trees, leaves, lr, leaf_rows) in VARIANTS.items():
            params = dict(T.PARAMS, num_leaves=leaves, learning_rate=lr,
                          min_data_in_leaf=leaf_rows)
            ds = lgb.Dataset(X[rows], y[rows], group=sizes, init_score=oof[rows])
            model = lgb.train(params, ds, num_boost_round=trees)
            for i in newer:
                a, b = groups[i]
                adapted[name][a:b] = oof[a:b] + model.predict(X[a:b])
    g = [groups[i] for i in newer_all]
    c = [gold[i] for i in newer_all]
    print(f"the newer half of each of {len(by_repo)} repositories: {len(g)} tasks")
    print(f"{'':28}{'Acc@1':>7}{'Acc@3':>7}{'Acc@5':>7}{'NDCG@10':>9}")
    rules = -X[:, names.index("rules_rank")]
    for name, score in [("rules", rules), ("global (held out)", oof)] + list(adapted.items()):
        m = T.metrics(g, y, score, c)
        print(f"{name:28}{m['acc@1']:7}{m['acc@3']:7}{m['acc@5']:7}{m['ndcg@10']:9}")


if __name__ == "__main__":
    main()
