"""The checklist as a whole: unique stage-prefixed rule ids, stage ordering, stable order within a stage."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import pytest

from diagnose.case import Case, Document, RegexConstraint, SamplingSpec
from diagnose.report import (
    AblationRun,
    STAGE_ORDER,
    Conflict,
    ConflictPair,
    Finding,
    GravityCenter,
    InputReport,
    ReaderInfo,
    SamplingReport,
    TemperatureRun,
    verdict_of,
)
from diagnose.triage import RULES, DeterminismCheck, Rule, TriageContext, TriageThresholds, triage

ROOT = Path(__file__).resolve().parents[2]


def _run(temperature: float, **kw) -> TemperatureRun:
    base = {"temperature": temperature, "n": 8, "first_token_divergence": 0.125, "mean_entropy": 0.4,
            "perplexity": 2.0, "repetition_rate": 0.0, "semantic_entropy": 0.0, "compliance_rate": 1.0,
            "truncation_rate": 0.0, "center_pull": {"c1": 1.0}, "samples": []}
    base.update(kw)
    return TemperatureRun(**base)


def quiet_context() -> TriageContext:
    """Nothing to report: every rule stays silent."""
    case = Case(id="quiet", question="Q?", documents=[Document(id=f"d{i}", text="t") for i in range(3)],
                sampling=SamplingSpec(temperatures=[0.7], top_p=1.0, top_k=0, max_new_tokens=128))
    inputs = InputReport(
        gravity_centers=[GravityCenter(id="c1", documents=["d0", "d1", "d2"], mass=1.0, label="A")],
        noise_documents=[], conflict=Conflict(detected=False, score=0.0),
        prompt_tokens=300, context_window=4096, strongest_center_position=0.0)
    return TriageContext(case=case, inputs=inputs, sampling=SamplingReport(runs=[_run(0.7)]),
                         environment={"device": "cpu", "dtype": "float32"},
                         thresholds=TriageThresholds(),
                         determinism=DeterminismCheck(0.7, 0, 20, 20, None))


EXCLUDED_BY_LOOPS = "sampling.weak_pull"
"""Silent while the outputs loop (sampling.strong_pull): the loud context without loops shows it."""


def loud_context(loops: bool = True) -> TriageContext:
    """Every rule in RULES has evidence past its threshold (``loops`` False: all but
    sampling.strong_pull, and then sampling.weak_pull, which loops silence)."""
    case = Case(id="loud", question="Q?", documents=[Document(id=f"d{i}", text="t") for i in range(5)],
                sampling=SamplingSpec(temperatures=[0.2, 0.7], top_p=0.9, top_k=3,
                                      repetition_penalty=1.5, max_new_tokens=256),
                constraints=[RegexConstraint(pattern="(a|a)+$")])
    inputs = InputReport(
        gravity_centers=[GravityCenter(id="c1", documents=["d0"], mass=0.5, label="1990"),
                         GravityCenter(id="c2", documents=["d1", "d2"], mass=0.5, label="2010")],
        noise_documents=["d3", "d4"],
        conflict=Conflict(detected=True, score=0.9,
                          pairs=[ConflictPair(a="d0", b="d1", kind="value_mismatch", evidence="x")]),
        prompt_tokens=2000, context_window=2200,
        instruction_conflicts=[["Be brief.", "Explain in detail."]],
        delimiter_issue="documents are concatenated", strongest_center_position=0.5,
        not_assessed=["stance", "entity", "standing_from_text"], reader_note="the reference reader is not installed",
        reader=ReaderInfo(name="reader", kind="reference", kernels="AVX2 AVX512", calibrated=False))
    runs = [_run(0.7, repetition_rate=0.3 * loops, truncation_rate=0.25, unavailable=["compliance_rate", "constraints[0]"],
                 answer_kinds={"answer": 6, "other": 2, "none": 0}),
            _run(0.2, semantic_entropy=1.2, first_token_divergence=0.75, repetition_rate=0.5 * loops,
                 truncation_rate=0.625, center_pull={"c1": 0.5, "c2": 0.375, "none": 0.125})]
    ablation = [
        AblationRun(variant="full_context", documents=["d0", "d1", "d2"], temperature=0.7,
                    mean_entropy=1.0, semantic_entropy=1.2, first_token_divergence=0.5, center_pull={}),
        AblationRun(variant="no_documents", documents=[], temperature=0.7,
                    mean_entropy=1.1, semantic_entropy=1.3, first_token_divergence=0.6, center_pull={}),
        AblationRun(variant="dominant_center", documents=["d1", "d2"], temperature=0.7,
                    mean_entropy=0.4, semantic_entropy=0.2, first_token_divergence=0.2, center_pull={}),
    ]
    return TriageContext(case=case, inputs=inputs, sampling=SamplingReport(runs=runs, ablation=ablation),
                         environment={"device": "cuda:0", "dtype": "bfloat16", "quantization": "int8",
                                      "model_id": "m"},
                         thresholds=TriageThresholds(),
                         determinism=DeterminismCheck(0.2, 5, 30, 31, 7),
                         baseline_environment={"device": "cuda:0", "dtype": "float16",
                                               "quantization": "int8", "model_id": "m"})


def test_rule_ids_are_unique() -> None:
    ids = [r.id for r in RULES]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_rule_id_is_prefixed_by_its_stage(rule: Rule) -> None:
    assert rule.stage in STAGE_ORDER
    stage, _, name = rule.id.partition(".")
    assert stage == rule.stage
    assert re.fullmatch(r"[a-z][a-z0-9_]*", name), rule.id


def test_registry_lists_rules_in_stage_order() -> None:
    positions = [STAGE_ORDER.index(r.stage) for r in RULES]
    assert positions == sorted(positions)


def test_every_stage_has_a_rule() -> None:
    assert {r.stage for r in RULES} == set(STAGE_ORDER)


def test_quiet_context_has_no_findings() -> None:
    assert triage(quiet_context()) == []
    assert verdict_of(triage(quiet_context())) == "ok"


def test_every_rule_fires_in_loud_context() -> None:
    findings = triage(loud_context())
    assert [f.rule for f in findings] == [r.id for r in RULES if r.id != EXCLUDED_BY_LOOPS]
    assert verdict_of(findings) == "fail"
    without_loops = [f.rule for f in triage(loud_context(loops=False))]
    assert EXCLUDED_BY_LOOPS in without_loops and "sampling.strong_pull" not in without_loops


def test_findings_carry_rule_metadata_and_serialise() -> None:
    by_id = {r.id: r for r in RULES}
    for finding in triage(loud_context()):
        assert isinstance(finding, Finding)
        assert finding.stage == by_id[finding.rule].stage
        assert finding.severity in ("info", "warn", "fail")
        assert finding.evidence, finding.rule
        assert finding.advice.strip(), finding.rule
        # evidence goes into the JSON report as is
        decoded = msgspec.json.decode(msgspec.json.encode(finding))
        assert decoded["rule"] == finding.rule


def test_findings_mention_their_thresholds() -> None:
    # Every rule that compares against a number repeats it in its evidence.
    comparing = {"input.noise_share", "input.lost_in_the_middle", "sampling.split_center_pull",
                 "sampling.weak_pull", "sampling.strong_pull", "sampling.determinism_trap",
                 "sampling.truncation_settings", "sampling.repetition_penalty_high",
                 "length.truncated", "length.context_window"}
    found = {f.rule: f for f in [*triage(loud_context(loops=False)), *triage(loud_context())]}
    for rule_id in comparing:
        text = msgspec.json.encode(found[rule_id].evidence).decode()
        assert "threshold" in text, rule_id


def test_triage_orders_by_stage_whatever_the_rule_order() -> None:
    reversed_rules = tuple(reversed(RULES))
    findings = triage(loud_context(), reversed_rules)
    stages = [f.stage for f in findings]
    assert stages == sorted(stages, key=STAGE_ORDER.index)
    # stable within a stage: the given (here reversed) order is kept
    for stage in STAGE_ORDER:
        given = [r.id for r in reversed_rules if r.stage == stage and r.id != EXCLUDED_BY_LOOPS]
        assert [f.rule for f in findings if f.stage == stage] == given


def test_triage_order_with_custom_rules() -> None:
    from diagnose.triage.context import Flag

    def always(tag: str):
        return lambda ctx: Flag("info", {"tag": tag}, "advice")

    rules = (
        Rule("framework.a", "framework", always("f1")),
        Rule("input.b", "input", always("i1")),
        Rule("length.c", "length", always("l1")),
        Rule("input.a", "input", always("i2")),
        Rule("environment.x", "environment", lambda ctx: None),
        Rule("sampling.z", "sampling", always("s1")),
        Rule("environment.y", "environment", always("e1")),
    )
    findings = triage(quiet_context(), rules)
    assert [f.evidence["tag"] for f in findings] == ["i1", "i2", "s1", "l1", "e1", "f1"]


def test_every_rule_is_documented_in_the_report_page() -> None:
    text = (ROOT / "docs" / "report.md").read_text(encoding="utf-8")
    missing = [r.id for r in RULES if r.id not in text]
    assert not missing, f"rules not listed in docs/report.md: {missing}"
