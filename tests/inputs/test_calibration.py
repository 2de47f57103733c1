import json
import math

import pytest

from diagnose.inputs.calibration import ConflictCalibration
from diagnose.inputs.conflict import FEATURES

CAL = ConflictCalibration(weights=(("bias", -2.0), ("value_split", 4.5), ("spread", 1.0)), conflict_at=0.8, unsure_at=0.4)


def test_probability_is_the_logistic_of_the_weighted_features():
    assert abs(CAL.probability({}) - 1 / (1 + math.exp(2.0))) < 1e-12
    z = -2.0 + 4.5 * 0.6 + 1.0 * 0.3
    assert abs(CAL.probability({"value_split": 0.6, "spread": 0.3, "camp_gap": 0.9}) - 1 / (1 + math.exp(-z))) < 1e-12
    # no overflow far out on either side
    assert CAL.probability({"value_split": 1e4}) == 1.0 and CAL.probability({"value_split": -1e4}) == 0.0


def test_state_has_three_bands():
    assert [CAL.state(p) for p in (0.0, 0.39, 0.4, 0.79, 0.8, 1.0)] == ["none", "none", "unsure", "unsure", "conflict", "conflict"]


def test_cut_points_must_be_ordered():
    with pytest.raises(ValueError, match="unsure_at"):
        ConflictCalibration(weights=(), conflict_at=0.3, unsure_at=0.6)


def test_the_shipped_calibration_names_known_features_and_ordered_cut_points():
    shipped = ConflictCalibration.shipped()
    assert {name for name, _ in shipped.weights} <= set(FEATURES) | {"bias"}
    assert 0.0 <= shipped.unsure_at <= shipped.conflict_at <= 1.0


def test_from_dict_reads_the_file_format():
    data = json.loads('{"weights": {"bias": 0.5, "spread": -1}, "conflict_at": 0.9, "unsure_at": 0.5, "figures": {}}')
    cal = ConflictCalibration.from_dict(data)
    assert cal.weights == (("bias", 0.5), ("spread", -1.0)) and cal.conflict_at == 0.9


def test_a_question_form_with_cut_points_of_its_own_uses_them_and_the_other_form_the_default():
    cal = ConflictCalibration(weights=(), conflict_at=0.9, unsure_at=0.8, by_form=(("yes_no", 0.7, 0.35),))
    assert cal.cuts(yes_no=True) == (0.7, 0.35) and cal.cuts(yes_no=False) == (0.9, 0.8)
    assert [cal.state(0.75, yes_no=True), cal.state(0.75, yes_no=False)] == ["conflict", "none"]
    assert [cal.state(0.5, yes_no=True), cal.state(0.85, yes_no=False)] == ["unsure", "unsure"]


def test_from_dict_reads_cut_points_by_form_and_refuses_an_unknown_form_or_disordered_cuts():
    data = {"weights": {"bias": 0.0}, "conflict_at": 0.9, "unsure_at": 0.5,
            "by_form": {"yes_no": {"conflict_at": 0.7, "unsure_at": 0.3}}}
    assert ConflictCalibration.from_dict(data).cuts(yes_no=True) == (0.7, 0.3)
    with pytest.raises(ValueError, match="unknown form 'choice'"):
        ConflictCalibration.from_dict(data | {"by_form": {"choice": {"conflict_at": 0.7, "unsure_at": 0.3}}})
    with pytest.raises(ValueError, match="of yes_no must satisfy"):
        ConflictCalibration.from_dict(data | {"by_form": {"yes_no": {"conflict_at": 0.3, "unsure_at": 0.7}}})


def test_the_shipped_reference_calibration_has_ordered_cut_points_for_each_form():
    shipped = ConflictCalibration.shipped("reference")
    for yes_no in (True, False):
        conflict_at, unsure_at = shipped.cuts(yes_no)
        assert 0.0 <= unsure_at <= conflict_at <= 1.0


def test_a_fit_records_the_reader_builds_it_read_and_says_whether_a_build_is_one():
    data = {"weights": {"bias": 0.0}, "conflict_at": 0.9, "unsure_at": 0.5,
            "fit": {"reader_kernels": ["AVX AVX2 FMA", "AVX AVX2 AVX512 FMA"]}}
    cal = ConflictCalibration.from_dict(data)
    assert cal.fitted_on("AVX AVX2 FMA") is True and cal.fitted_on("AVX AVX2 AVX512 FMA") is True
    assert cal.fitted_on("AVX AVX2 AVX512 AVX512_VNNI FMA") is False
    # unknown on either side: a server reader has no build, an older fit recorded none
    assert cal.fitted_on(None) is None
    assert ConflictCalibration.from_dict({**data, "fit": {}}).fitted_on("AVX AVX2 FMA") is None
