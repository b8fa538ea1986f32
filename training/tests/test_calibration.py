import json
from pathlib import Path

import numpy as np

from iret_training import calibration
from iret_training.metrics import groups_of


def test_context_agrees_with_the_cases_iret_rank_checks():
    cases = json.loads((Path(__file__).parent / "calibration_cases.json").read_text())
    for case in cases:
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
