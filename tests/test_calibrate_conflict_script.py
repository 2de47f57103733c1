"""scripts/calibrate-conflict: cut points per question form."""

from __future__ import annotations

import numpy as np

from tests.script_module import load_script


def test_a_form_with_enough_agreeing_cases_gets_its_own_cut_and_another_the_pooled_one():
    m = load_script("calibrate-conflict")
    # 40 agreeing yes/no cases at 0.01 .. 0.40 and 40 conflicts at 0.5; 5 agreeing open cases, one at 0.9
    yes_no_agreeing = [0.01 * (k + 1) for k in range(40)]
    p = np.array(yes_no_agreeing + [0.5] * 40 + [0.1, 0.2, 0.3, 0.4, 0.9] + [0.95] * 5)
    y = np.array([0.0] * 40 + [1.0] * 40 + [0.0] * 5 + [1.0] * 5)
    forms = np.array(["yes_no"] * 80 + ["open"] * 10)
    sets = np.array(["dev/one"] * 90)
    cuts = m.form_cuts(sets, forms, y, p, 0.05, each=True)
    # 5% of 40 agreeing yes/no cases: two may reach the cut, so it sits at the third highest
    assert cuts["yes_no"] == 0.39
    # too few agreeing open cases (5 < 20) for a cut of their own: the pooled one, set by all 45 agreeing cases
    pooled = m.cut_point(sets, y, p, 0.05, True)
    assert cuts["open"] == pooled and pooled <= 0.9
    assert list(m.called(forms[:1], np.array([0.39]), cuts)) == [True]
