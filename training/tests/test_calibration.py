import json
from pathlib import Path

import numpy as np

from iret_training import calibration
from iret_training.metrics import groups_of


def test_context_agrees_with_the_cases_iret_rank_checks():
    cases = json.loads((Path(__file__).parent / "calibration_cases.json").read_text())
    for case in (c for c in cases if "scores" in c):
        s = np.asarray(case["scores"], dtype=np.float64)
        got = calibration.context(s, [(0, len(s))])
        assert np.allclose(got, np.asarray(case["inputs"])), case


def test_a_calibration_fitted_on_separable_scores_puts_gold_above_the_rest():
    rng = np.random.default_rng(0)
    tasks = np.repeat(np.arange(200), 5)
    y = np.tile([1, 0, 0, 0, 0], 200)
    scores = np.where(y == 1, 2.0, -1.0) + rng.normal(0, 0.3, len(y))
    groups = groups_of(tasks)
    a, b = calibration.fit(scores, y, groups)
    p = calibration.probabilities(scores, groups, a, b)
    assert p[y == 1].min() > 0.7 > p[y == 0].max()
    bands = calibration.bands(p, y)
    assert bands == {"share_of_strong_that_are_gold": 1.0, "share_of_gold_reaching_0.7": 1.0}


def test_bands_put_the_chosen_share_of_each_kinds_targets_at_0_7():
    rng = np.random.default_rng(1)
    # Two kinds, one with many more targets and higher probabilities: each counts alike.
    p = np.concatenate([rng.uniform(0.5, 1.0, 900), rng.uniform(0.0, 0.5, 100), rng.uniform(0, 1, 1000)])
    y = np.concatenate([np.ones(1000), np.zeros(1000)]).astype(int)
    kind = np.array(["commit"] * 900 + ["semble"] * 100 + ["commit"] * 1000)
    bands = calibration.fit_bands(p, y, kind, strong_recall=0.8, weak_recall=0.98)
    assert 0 < bands["weak"] < bands["strong"] < 1
    rel = calibration.relevance(p, bands)
    gold = y == 1
    for k in ("commit", "semble"):
        reach = (rel[gold & (kind == k)] >= 0.7 - 1e-9).mean()
        assert (reach > 0.8) == (k == "commit"), (k, reach)
    both = 0.5 * ((rel[gold & (kind == "commit")] >= 0.7).mean() + (rel[gold & (kind == "semble")] >= 0.7).mean())
    assert abs(both - 0.8) < 0.02, both
    assert np.all(np.diff(calibration.relevance(np.linspace(0, 1, 101), bands)) >= 0)


def test_relevance_agrees_with_the_cases_iret_rank_checks():
    cases = json.loads((Path(__file__).parent / "calibration_cases.json").read_text())
    banded = [c for c in cases if "bands" in c]
    assert banded
    for case in banded:
        got = calibration.relevance(np.asarray(case["probabilities"]), case["bands"])
        assert np.allclose(got, np.asarray(case["relevance"]), atol=1e-6), case
