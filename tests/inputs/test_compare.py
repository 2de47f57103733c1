import math

import numpy as np

from diagnose.inputs.answers import DocAnswer
from diagnose.inputs.compare import compare_sides, pair_split, sides


class _Reader:
    def __init__(self, margins):
        self.margins, self.asked = margins, []

    def compare(self, question, pairs):
        self.asked.extend(pairs)
        return [self.margins.get(p) for p in pairs]


def _found(*keys):
    return [DocAnswer(k, "s") if k is not None else None for k in keys]


def test_sides_are_the_relevant_documents_that_state_a_stance():
    found = _found("yes", None, "no", "yes", "no")
    noise = np.array([False, False, False, True, False])
    relevance = np.array([0.5, 0.9, 0.7, 0.8, 0.6], np.float32)
    assert sides(found, noise, relevance, limit=2) == [2, 4]
    assert sides(found, noise, relevance, limit=5) == [2, 4, 0]


def test_compare_sides_asks_every_pair_once_in_case_order():
    texts = ["alpha", "beta", "gamma"]
    reader = _Reader({("alpha", "beta"): 2.0, ("alpha", "gamma"): -3.0, ("beta", "gamma"): None})
    got = compare_sides(reader, "q?", texts, _found("yes", "yes", "no"), np.zeros(3, bool), np.ones(3, np.float32), 4)
    assert reader.asked == [("alpha", "beta"), ("alpha", "gamma"), ("beta", "gamma")]
    assert got == [2.0, -3.0]
    # one side only: nothing to compare
    assert compare_sides(reader, "q?", texts, _found("yes", None, None), np.zeros(3, bool), np.ones(3, np.float32), 4) is None


def test_pair_split_is_the_mean_chance_of_different_answers():
    assert pair_split([]) == 0.0
    assert abs(pair_split([0.0]) - 0.5) < 1e-12
    assert abs(pair_split([2.0, -2.0]) - 0.5) < 1e-12
    assert pair_split([-5.0]) > 0.99 and pair_split([1e6]) < 1e-12
    assert abs(pair_split([1.0]) - 1 / (1 + math.e)) < 1e-12
