"""Cross-validation folds grouped by repository, across every kind: a repository's tasks of
every kind sit in one fold, so a model is never scored on a repository it trained on."""
import numpy as np


def assign(repos, kinds, folds, seed=7):
    """{repository: fold}. Repositories are dealt to the folds in a seeded order, those with
    tasks of rarer kinds first, so that each fold holds its share of every kind."""
    kinds_of = {}
    for r, k in zip(repos, kinds):
        kinds_of.setdefault(r, set()).add(k)
    count = {}
    for ks in kinds_of.values():
        for k in ks:
            count[k] = count.get(k, 0) + 1
    rng = np.random.default_rng(seed)
    uniq = sorted(kinds_of)
    rng.shuffle(uniq)
    # Rarest kind first; within it the seeded order.
    uniq.sort(key=lambda r: min(count[k] for k in kinds_of[r]))
    return {r: i % folds for i, r in enumerate(uniq)}
