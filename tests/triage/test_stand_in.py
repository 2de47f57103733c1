"""Which sampled model stands in for the served one, and what is then reported as info."""

from __future__ import annotations

from diagnose.case import Case
from diagnose.report import Finding
from diagnose.triage.stand_in import as_stand_in, stand_in_reason


def _case(**kw) -> Case:
    return Case(id="c", question="How long is the leave?", **kw)


def test_the_embedded_default_is_a_stand_in_unless_the_case_says_otherwise():
    assert "embedded default" in stand_in_reason(_case())
    assert stand_in_reason(_case(stand_in=False)) is None
    assert stand_in_reason(_case(), remote=True) is None


def test_a_local_model_is_the_users_own_unless_marked():
    assert stand_in_reason(_case(model="/models/mine")) is None
    assert "/models/mine" in stand_in_reason(_case(model="/models/mine", stand_in=True))


def test_only_the_models_own_behaviour_becomes_info():
    findings = [Finding(stage=s, rule=r, severity="fail", evidence={}, advice="a")
                for s, r in (("input", "input.competing_centers"), ("sampling", "sampling.split_center_pull"),
                             ("sampling", "sampling.weak_pull"), ("length", "length.truncated"))]
    out = as_stand_in(findings, "a stand-in")
    assert [f.severity for f in out] == ["fail", "fail", "info", "info"]
    assert out[2].evidence["stand_in"] == "a stand-in" and as_stand_in(findings, None) == findings
