"""The ranker's score as a probability within its task: logistic regression on what the score
says in its task's context. `iret_rank::calibration_inputs` computes the same context at serving
time; `tests/calibration_cases.json` pins both to the same numbers."""
import numpy as np


def context(scores, groups):
    """Per candidate: its score, its distance below its task's best, and for the best its
    margin over the second (1 when alone)."""
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


def fit(scores, labels, groups, weights=None):
    """(a, b) of p = 1 / (1 + exp(-(a . context + b))), fitted on held-out scores."""
    from sklearn.linear_model import LogisticRegression

    lr = LogisticRegression(C=1e6, max_iter=2000)
    lr.fit(context(scores, groups), labels, sample_weight=weights)
    return [float(w) for w in lr.coef_[0]], float(lr.intercept_[0])


def probabilities(scores, groups, a, b):
    return 1 / (1 + np.exp(-(context(scores, groups) @ np.asarray(a) + b)))


def bands(prob, y, strong=0.7):
    """Of the candidates at `strong` or above, the share that are gold; of the gold
    candidates, the share that reach it."""
    hi = prob >= strong
    return {
        "share_of_strong_that_are_gold": round(float(y[hi].mean()), 3) if hi.any() else None,
        "share_of_gold_reaching_0.7": round(float(hi[y == 1].mean()), 3) if (y == 1).any() else None,
    }


# Relevance bands (the seed's): 0.7 and above, a file to read or change; below 0.2, irrelevant
# (the loop excludes it). A probability is not a band: a task has few targets among dozens of
# candidates, so a target that leads its task often gets 0.5. The bands are placed on the
# held-out probabilities instead: 0.7 where `strong_recall` of the targets reach, 0.2 where
# `weak_recall` do, every kind counting alike; between and beyond, linear.
STRONG, WEAK = 0.7, 0.2


def weighted_quantile(values, q, weights):
    order = np.argsort(values)
    v, w = values[order], weights[order]
    cum = np.cumsum(w) - 0.5 * w
    return float(np.interp(q * w.sum(), cum, v))


def fit_bands(prob, y, kind, strong_recall=0.8, weak_recall=0.98):
    """{"weak": p, "strong": p}: the probabilities that become relevance 0.2 and 0.7."""
    gold = y == 1
    p, k = prob[gold], kind[gold]
    kinds, counts = np.unique(k, return_counts=True)
    per = dict(zip(kinds, counts))
    w = np.array([1.0 / per[x] for x in k])
    strong = weighted_quantile(p, 1 - strong_recall, w)
    weak = weighted_quantile(p, 1 - weak_recall, w)
    strong = min(max(strong, 1e-4), 1 - 1e-4)
    weak = min(max(weak, 1e-5), strong * 0.999)
    return {"weak": weak, "strong": strong}


def relevance(prob, bands):
    """A probability as relevance: piecewise linear through (0, 0), (weak, 0.2),
    (strong, 0.7), (1, 1). `bands` None: the probability itself."""
    if bands is None:
        return np.asarray(prob, dtype=np.float64)
    return np.interp(prob, [0.0, bands["weak"], bands["strong"], 1.0], [0.0, WEAK, STRONG, 1.0])
