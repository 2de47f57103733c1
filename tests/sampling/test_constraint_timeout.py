"""A regex constraint that backtracks catastrophically is stopped, reported, and never freezes a run."""

from __future__ import annotations

import re
import time


from diagnose.case import Case, Document, MustIncludeConstraint, RegexConstraint, SamplingSpec
from diagnose.inputs import InputSettings, analyze_inputs
from diagnose.report import TemperatureRun
from diagnose.decode.fake import FakeBackend
from diagnose.sampling.settings import SamplingSettings
from diagnose.sampling.stage import run_sampling
from diagnose.triage import RULES, TriageContext, TriageThresholds, triage
from diagnose.triage import sampling_rules
from tests.fakes import WordEmbedder
from tests.factories import empty_inputs

HOSTILE = r"^(\w|\w)+$"  # exponential on a long word that ends in punctuation, in re and in regex alike
WORD = "TheanswerisinBrokenBow1937abc!"
VOCAB = ["<eos>", "<unk>", WORD, "yes", "bow"]


def _says_the_word(history: list[int]) -> list[float]:
    """One token, ``WORD`` (sometimes ``yes`` when hot), then the end."""
    if history and history[-1] in (2, 3):
        return [9.0, 0.0, 0.0, 0.0, 0.0]
    return [0.0, 0.0, 3.0, 2.0, 0.0]


def _sample(constraints, limits: SamplingSettings):
    case = Case(
        id="regex", question="Where?", documents=[Document(id="d0", text="broken bow"), Document(id="d1", text="bow")],
        sampling=SamplingSpec(seeds=16, temperatures=[0.2, 0.7, 1.2], max_new_tokens=4, top_k=0, top_p=1.0),
        constraints=constraints,
    )
    embedder = WordEmbedder()
    analysis = analyze_inputs(case, embedder, InputSettings())
    backend = FakeBackend(VOCAB, _says_the_word)
    started = time.perf_counter()
    report, _ = run_sampling(case, backend, [4], embedder, analysis, settings=limits)
    elapsed = time.perf_counter() - started
    context = TriageContext(case=case, inputs=analysis.report, sampling=report, environment={},
                            thresholds=TriageThresholds(), sampling_settings=limits)
    return report, triage(context), elapsed


def test_48_samples_with_a_catastrophic_regex_finish_and_report_it():
    limits = SamplingSettings(regex_timeout_s=0.05, regex_budget_s=0.5)
    constraints = [MustIncludeConstraint(text="yes"), RegexConstraint(pattern=HOSTILE)]
    report, findings, elapsed = _sample(constraints, limits)
    assert elapsed < 5.0  # with re.search: 2^30 steps per sample
    assert sum(run.n for run in report.runs) == 48
    for run in report.runs:
        assert "compliance_rate" in run.unavailable and "constraints[1]" in run.unavailable
        # judged on the must_include constraint alone: "yes", ignoring case
        expected = ["yes" in s.text.lower() for s in run.samples]
        assert [s.compliant for s in run.samples] == expected
        assert run.compliance_rate == sum(expected) / run.n
    found = [f for f in findings if f.rule == "sampling.constraint_timeout"]
    assert len(found) == 1
    finding = found[0]
    assert finding.stage == "sampling" and finding.severity == "warn"
    assert finding.evidence == {
        "constraints": [{"constraint": "constraints[1]", "pattern": HOSTILE, "temperatures": [0.2, 0.7, 1.2]}],
        "thresholds": {"regex_timeout_s": 0.05, "regex_budget_s": 0.5},
    }
    assert "nested" in finding.advice and "simplify" in finding.advice.lower()


def test_a_quick_regex_is_judged_and_reported_as_usual():
    report, findings, _ = _sample([RegexConstraint(pattern=r"\byes\b")], SamplingSettings())
    for run in report.runs:
        assert not any(u == "compliance_rate" or u.startswith("constraints[") for u in run.unavailable)
        assert run.compliance_rate == sum(re.search(r"\byes\b", s.text) is not None for s in run.samples) / run.n
    assert "sampling.constraint_timeout" not in {f.rule for f in findings}


def _run(temperature: float, unavailable: list[str]) -> TemperatureRun:
    return TemperatureRun(temperature=temperature, n=8, first_token_divergence=0.125, mean_entropy=0.4,
                          perplexity=2.0, repetition_rate=0.0, semantic_entropy=0.0, compliance_rate=1.0,
                          truncation_rate=0.0, center_pull={"none": 1.0}, samples=[], unavailable=unavailable)


def _context(runs: list[TemperatureRun]) -> TriageContext:
    from diagnose.report import SamplingReport

    case = Case(id="c", question="Q?", documents=[Document(id="d0", text="t")],
                constraints=[RegexConstraint(pattern=r"\d"), RegexConstraint(pattern="(a+)+$"),
                             RegexConstraint(pattern="(x|x)*y")])
    return TriageContext(case=case, inputs=empty_inputs(), sampling=SamplingReport(runs=runs), environment={},
                         thresholds=TriageThresholds(),
                         sampling_settings=SamplingSettings(regex_timeout_s=0.2, regex_budget_s=2.0))


def test_the_rule_names_each_stopped_pattern_and_the_temperatures_it_left_unjudged():
    runs = [_run(0.7, ["compliance_rate", "constraints[1]", "constraints[2]"]),
            _run(0.2, ["compliance_rate", "constraints[2]"]), _run(1.2, ["perplexity"])]
    flag = sampling_rules.constraint_timeout(_context(runs))
    assert flag is not None and flag.severity == "warn"
    assert flag.evidence == {
        "constraints": [
            {"constraint": "constraints[1]", "pattern": "(a+)+$", "temperatures": [0.7]},
            {"constraint": "constraints[2]", "pattern": "(x|x)*y", "temperatures": [0.2, 0.7]},
        ],
        "thresholds": {"regex_timeout_s": 0.2, "regex_budget_s": 2.0},
    }


def test_the_rule_is_silent_when_every_constraint_was_judged():
    assert sampling_rules.constraint_timeout(_context([_run(0.7, ["mean_entropy", "perplexity"])])) is None
    assert sampling_rules.constraint_timeout(_context([])) is None


def test_the_rule_is_registered_in_the_sampling_stage():
    rule = next(r for r in RULES if r.id == "sampling.constraint_timeout")
    assert rule.stage == "sampling" and rule.check is sampling_rules.constraint_timeout
