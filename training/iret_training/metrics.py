"""File-level figures over tasks: Acc@k (every gold file in the top k) and NDCG@10."""
import math

import numpy as np


def groups_of(tasks):
    """Row index ranges of each task (a task's rows are contiguous in a table)."""
    bounds = [0]
    for i in range(1, len(tasks)):
        if tasks[i] != tasks[i - 1]:
            bounds.append(i)
    bounds.append(len(tasks))
    return [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)] if len(tasks) else []


def rank_of_all(order_labels):
    """1-based rank by which every gold row has appeared (None: no gold row)."""
    gold = [i for i, label in enumerate(order_labels) if label]
    return gold[-1] + 1 if gold else None


def ndcg10(order_labels, n_gold):
    dcg = sum(1 / math.log2(i + 2) for i, label in enumerate(order_labels[:10]) if label)
    idcg = sum(1 / math.log2(i + 2) for i in range(min(n_gold, 10)))
    return dcg / idcg if idcg else 0.0


def metrics(groups, y, score, gold_counts):
    """Acc@k and NDCG@10 over `groups`, higher `score` first; a gold file that is no
    candidate counts as not found (`gold_counts` says how many each task has)."""
    acc = {1: 0, 3: 0, 5: 0, 10: 0}
    nd = 0.0
    for (a, b), n_gold in zip(groups, gold_counts):
        order = np.argsort(-score[a:b], kind="stable")
        labels = y[a:b][order]
        r = rank_of_all(labels) if int(labels.sum()) >= n_gold else None
        for k in acc:
            acc[k] += r is not None and r <= k
        nd += ndcg10(list(labels), n_gold)
    n = max(len(groups), 1)
    out = {f"acc@{k}": round(100 * v / n, 1) for k, v in acc.items()}
    out["ndcg@10"] = round(nd / n, 4)
    out["tasks"] = len(groups)
    return out
