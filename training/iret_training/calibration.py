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
