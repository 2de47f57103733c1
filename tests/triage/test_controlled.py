"""Sampling findings decided against the control run, and the stand-in's own behaviour as info."""

from __future__ import annotations

import msgspec

from diagnose.pipeline import Diagnoser
from diagnose.settings import Settings
from tests.repair.fakes import bridge_case
from tests.repair.test_pipeline import FakeRegistry


def _run(case, **kwargs):
    registry = FakeRegistry()
    return Diagnoser(Settings(), registry).run(case, read=False, **kwargs), registry


def _finding(report, rule):
    return next(f for f in report.findings if f.rule == rule)


def _case(*years: str, **extra):
    """One token: every sample ends at the budget, whatever the context."""
    case = bridge_case(*years, **extra)
    return msgspec.structs.replace(case, sampling=msgspec.structs.replace(case.sampling, max_new_tokens=1))


def test_the_split_is_the_prompts_and_the_truncation_the_models():
    report, registry = _run(_case("1937", "1937", "1952", stand_in=False))
    assert report.sampling.control.variant == "dominant_center"
    assert report.sampling.control.documents == ["d1", "d2"]
    split = _finding(report, "sampling.split_center_pull")
    assert split.severity == "fail" and split.evidence["control"]["attributed"] == "prompt"
    [test] = split.evidence["control"]["tests"]
    assert test["metric"] == "competing_pull" and test["p_adjusted"] < 0.05 and test["control"] == 0.0
    assert split.evidence["control"]["center"] == "c1"
    cut = _finding(report, "length.truncated")
    assert cut.severity == "info" and cut.evidence["control"]["attributed"] == "model"
    assert "same model, seeds and settings" in cut.advice
    assert report.basis.controlled and report.basis.deciding == "sampling.split_center_pull"
    assert report.basis.stand_in is None
    # The main run, the determinism check's row, the control.
    assert registry.backend.prefills == 3


def test_without_controls_the_verdict_is_uncontrolled_and_keeps_every_severity():
    report, registry = _run(_case("1937", "1937", "1952", stand_in=False), controls=False)
    assert report.sampling.control is None and not report.basis.controlled
    cut = _finding(report, "length.truncated")
    assert cut.severity == "fail" and "control" not in cut.evidence
    assert registry.backend.prefills == 2


def test_a_stand_in_reports_its_own_behaviour_as_info_but_not_the_split():
    report, _ = _run(_case("1937", "1937", "1952"), controls=False)
    assert report.basis.stand_in and "embedded default" in report.basis.stand_in
    cut = _finding(report, "length.truncated")
    assert cut.severity == "info" and cut.evidence["stand_in"] == report.basis.stand_in
    assert _finding(report, "sampling.split_center_pull").severity == "fail"
    assert report.verdict == "fail"


def test_what_the_documents_add_beyond_no_documents_is_the_prompts():
    # One center and nothing else: the control is the question alone. Without documents the
    # fake may end at once; with them it always states a year first, so the budget cuts more.
    report, _ = _run(_case("1937", "1937", stand_in=False))
    assert report.sampling.control.variant == "no_documents"
    cut = _finding(report, "length.truncated")
    [test] = cut.evidence["control"]["tests"]
    assert cut.evidence["control"]["attributed"] == "prompt" and cut.severity == "fail"
    assert test["full_context"] == 1.0 and test["control"] < 1.0 and test["p_adjusted"] < 0.05


def test_the_sampled_model_reads_only_when_asked_and_without_a_reference_reader_the_text_decides():
    def run(case, **kwargs):
        return Diagnoser(Settings(), FakeRegistry()).run(case, controls=False, **kwargs).input

    stand_in, own = _case("1937", "1952"), _case("1937", "1952", stand_in=False)
    for case in (stand_in, own):  # the fake registry has no reference reader installed
        default = run(case)
        assert default.tier == "static" and default.reader.kind == "static"
        assert default.not_assessed == ["stance", "entity", "standing_from_text"] and "not installed" in default.reader_note
        assert run(case, read=True).tier == "read" and run(case, reader="sampled").reader.kind == "sampled"
        assert run(case, read=False).tier == "static" and run(case, read=False).reader_note is None
