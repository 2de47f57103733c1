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
