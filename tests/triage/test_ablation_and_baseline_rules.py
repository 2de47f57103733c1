"""sampling.context_pull (ablation runs) and environment.fingerprint_changed (baseline)."""

from __future__ import annotations

from diagnose.case import Case
from diagnose.report import AblationRun, SamplingReport
from diagnose.triage import TriageContext, TriageThresholds
from diagnose.triage.environment_rules import fingerprint_changed
from diagnose.triage.sampling_rules import context_pull
from tests.factories import empty_inputs

GAP = TriageThresholds().ablation_gap


def _ablation(full: float, bare: float, dominant: float | None, full_mean=1.0, bare_mean=1.0) -> list[AblationRun]:
    def run(name: str, sem: float, mean: float) -> AblationRun:
        return AblationRun(variant=name, documents=[], temperature=0.7, mean_entropy=mean,
                           semantic_entropy=sem, first_token_divergence=0.5, center_pull={})
    runs = [run("full_context", full, full_mean), run("no_documents", bare, bare_mean)]
    if dominant is not None:
        runs.append(run("dominant_center", dominant, 0.5))
    return runs


def _context(ablation=None, environment=None, baseline=None) -> TriageContext:
    return TriageContext(
        case=Case(id="c", question="q?"),
        inputs=empty_inputs(),
        sampling=SamplingReport(runs=[], ablation=ablation or []),
        environment=environment or {},
        thresholds=TriageThresholds(),
        baseline_environment=baseline,
    )


def test_no_ablation_no_finding():
    assert context_pull(_context()) is None


def test_dominant_center_much_narrower_warns():
    flag = context_pull(_context(_ablation(full=1.0, bare=1.5, dominant=1.0 - GAP, bare_mean=2.0)))
    assert flag.severity == "warn" and "dominant center" in flag.advice
    assert flag.evidence["dominant_center"]["semantic_entropy"] == round(1.0 - GAP, 3)


def test_context_that_does_not_narrow_warns_weak_pull():
    flag = context_pull(_context(_ablation(full=1.2, bare=1.2, dominant=None, full_mean=1.0, bare_mean=1.0 + GAP / 2)))
    assert flag.severity == "warn" and "barely narrow" in flag.advice


def test_a_weak_context_pull_is_not_claimed_while_the_outputs_loop():
    from diagnose.triage.sampling_rules import strong_pull
    from tests.factories import make_run

    context = _context(_ablation(full=1.2, bare=1.2, dominant=None, full_mean=1.0, bare_mean=1.0 + GAP / 2))
    context.sampling.runs = [make_run(0.7, repetition_rate=0.6)]
    flag = context_pull(context)
    assert strong_pull(context) is not None
    assert flag.severity == "info" and "loop" in flag.advice and "weak" not in flag.advice.split(":")[0]


def test_context_that_narrows_is_informational():
    flag = context_pull(_context(_ablation(full=0.2, bare=1.4, dominant=0.1, full_mean=0.3, bare_mean=1.5)))
    assert flag.severity == "info"


def test_fingerprint_changes_are_listed():
    now = {"model_hash": "a", "dtype": "float32", "libraries": {"torch": "2.13.0", "numpy": "2.4"}}
    before = {"model_hash": "a", "dtype": "bfloat16", "libraries": {"torch": "2.12.0", "numpy": "2.4"}}
    flag = fingerprint_changed(_context(environment=now, baseline=before))
    assert flag.severity == "warn"
    assert flag.evidence["changes"] == {
        "dtype": {"baseline": "bfloat16", "now": "float32"},
        "libraries.torch": {"baseline": "2.12.0", "now": "2.13.0"},
    }


def test_same_fingerprint_or_no_baseline_is_silent():
    env = {"model_hash": "a", "dtype": "float32", "libraries": {"torch": "2.13.0"}}
    assert fingerprint_changed(_context(environment=env, baseline=dict(env))) is None
    assert fingerprint_changed(_context(environment=env, baseline=None)) is None


def test_a_thread_count_change_alone_is_information_that_names_float_sums():
    env = {"model_hash": "a", "dtype": "float32", "threads": 1, "libraries": {"torch": "2.13.0"}}
    flag = fingerprint_changed(_context(environment=env, baseline=env | {"threads": 4}))
    assert flag.severity == "info" and flag.evidence["changes"] == {"threads": {"baseline": 4, "now": 1}}
    assert "floating-point sums" in flag.advice
    both = fingerprint_changed(_context(environment=env, baseline=env | {"threads": 4, "dtype": "bfloat16"}))
    assert both.severity == "warn"
