"""Verdict rules and the p-values behind them, computed by hand."""

from __future__ import annotations

import math

import pytest

from diagnose.report import RepairTest, Sample, TemperatureRun
from diagnose.sampling.paired_measures import METRICS, Side
from diagnose.sampling.paired_tests import SignificanceSettings, compare
from diagnose.stats import bonferroni, bootstrap_p_value
from diagnose.repair.verdict import outcome, verdict
from diagnose.sampling.metrics import semantic_entropy


def _run(centers: list[str], clusters: list[int] | None = None, compliant=None, finish=None) -> Side:
    n = len(centers)
    samples = [Sample(seed=i, text="", center=c, cluster=(clusters or [0] * n)[i], first_token="'x'",
                      compliant=True if compliant is None else compliant[i],
                      finish_reason="stop" if finish is None else finish[i]) for i, c in enumerate(centers)]
    # The aggregates are not read: every metric here reads the samples.
    run = TemperatureRun(temperature=0.7, n=n, first_token_divergence=0.0, mean_entropy=None, perplexity=None,
                         repetition_rate=0.0, semantic_entropy=0.0, compliance_rate=0.0, truncation_rate=0.0,
                         center_pull={}, samples=samples)
    return Side(run, [])


def _test(metric="center_split", role="target", p_adjusted=0.001, diff=-0.5, result="better") -> RepairTest:
    return RepairTest(metric=metric, role=role, test="fisher_exact", before=0.5, after=0.5 + diff, diff=diff,
                      p=p_adjusted, p_adjusted=p_adjusted, min_change=0.2, outcome=result)


def test_fisher_on_the_center_split_by_hand():
    # Before: 4 of 8 samples off the leading center; after: none. Fisher's two-sided p for
    # [[4, 4], [0, 8]] sums the tables with the same margins no more likely than it:
    # P(k) = C(8,k) C(8,4-k) / C(16,4) for k off-center before; k=4 and k=0 each 70/1820.
    before = _run(["c1"] * 4 + ["c2"] * 4)
    after = _run(["c1"] * 8)
    result = compare(METRICS["center_split"], [(before, after)], SignificanceSettings())
    assert (result.before, result.after, result.diff) == (0.5, 0.0, -0.5)
    assert result.p == pytest.approx(2 * 70 / 1820)


def test_pooled_over_temperatures_and_bonferroni():
    # Two temperatures pooled: 8/16 off-center before, 0/16 after.
    # P(k) = C(16,k) C(16,8-k) / C(32,8); the extremes k=8 and k=0 each 12870/10518300.
    pairs = [(_run(["c1"] * 4 + ["c2"] * 4), _run(["c1"] * 8))] * 2
    result = compare(METRICS["center_split"], pairs, SignificanceSettings())
    assert result.p == pytest.approx(2 * 12870 / 10518300)
    assert bonferroni(result.p, 4) == pytest.approx(4 * result.p)
    assert bonferroni(0.3, 4) == 1.0


def test_the_leader_includes_samples_that_follow_no_center():
    # "none" leads with 5 of 8: 3 off the leader.
    side = _run(["none"] * 5 + ["c1"] * 3)
    assert METRICS["center_split"].value([side]) == 3 / 8


def test_bootstrap_p_values_by_hand():
    # Before: each sample its own cluster (entropy ln 4); after: one cluster (0). Only a
    # round that draws one before-index four times has entropy 0 (4 of 256 draws), so the
    # difference is < 0 in about 98% of rounds.
    before = _run(["c1"] * 4, clusters=[0, 1, 2, 3])
    after = _run(["c1"] * 4)
    result = compare(METRICS["semantic_entropy"], [(before, after)], SignificanceSettings(resamples=1000))
    assert result.before == pytest.approx(math.log(4)) and result.after == 0.0
    # p = P(diff >= 0) x 2 = 2 x 4/256 = 0.03125 (the bootstrap estimates it).
    assert result.p == pytest.approx(2 * 4 / 256, abs=0.02)
    # A constant shift: every round differs by -1, so the interval always excludes 0.
    diff, p = bootstrap_p_value(lambda v: float(v.mean()), [([1.0] * 4, [0.0] * 4)], resamples=500)
    assert (diff, p) == (-1.0, 1 / 500)


def test_bootstrap_p_is_about_one_when_half_the_rounds_see_no_difference():
    # Before [0, 1] clusters, after one cluster: a round draws the same before-index twice
    # with probability 1/2 (entropy 0, difference 0), else the difference is -ln 2. The
    # two-sided p is 2 x P(difference >= 0) = 1, up to the resampling noise of 1000 rounds.
    diff, p = bootstrap_p_value(semantic_entropy, [([0, 1], [0, 0])])
    assert diff == pytest.approx(-math.log(2)) and p == pytest.approx(1.0, abs=0.1)
    # No difference at all: no interval excludes 0.
    assert bootstrap_p_value(semantic_entropy, [([0, 1], [0, 1]), ([0, 0], [1, 1])])[1] == 1.0


@pytest.mark.parametrize(("diff", "p_adjusted", "expected"), [
    (-0.5, 0.01, "better"),  # significant and large enough, in the better direction (lower)
    (+0.5, 0.01, "worse"),
    (-0.5, 0.05, "none"),    # at alpha: not significant
    (-0.1, 0.0001, "none"),  # significant but below the minimum change (0.2)
])
def test_outcome_needs_significance_and_a_minimum_change(diff, p_adjusted, expected):
    assert outcome(METRICS["center_split"], diff, p_adjusted, 0.05) == expected


def test_compliance_is_better_when_it_rises():
    assert outcome(METRICS["compliance_rate"], +0.5, 0.001, 0.05) == "better"
    assert outcome(METRICS["compliance_rate"], -0.5, 0.001, 0.05) == "worse"


def test_verdicts():
    better, nothing = _test(), _test(result="none", p_adjusted=0.6, diff=-0.1)
    worse_guard = _test(metric="compliance_rate", role="guard", diff=-0.5, result="worse")
    better_guard = _test(metric="compliance_rate", role="guard", diff=+0.5, result="better")
    assert verdict([better], resolved=True) == "fixes"
    assert verdict([better], resolved=False) == "helps"
    assert verdict([better, worse_guard], resolved=True) == "worse"  # a trade-off is not a fix
    assert verdict([nothing], resolved=True) == "no_effect"  # resolved by noise alone is not verified
    assert verdict([nothing, better_guard], resolved=True) == "no_effect"  # only a target can verify
    assert verdict([], resolved=True) == "no_effect"
