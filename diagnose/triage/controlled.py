"""Findings decided against the control: is it the prompt, or the model?

A finding that blames the context (the outputs split between centers, wobble, loop
or run past the budget; off-topic passages dilute the pull) is compared with the control run
(:mod:`diagnose.sampling.controls`): same model, seeds and settings, the context
reduced to one consistent center or to no documents. Each metric behind the finding
is tested full context against control with the nightly gate's tests (Fisher's exact
test on rates, the stratified bootstrap on spread metrics; :mod:`diagnose.sampling.paired_tests`;
the split by the share of samples following a center the control left out, :data:`COMPETING_PULL`,
the noise by the share following no center, :data:`NO_CENTER`),
Bonferroni-corrected over every metric tested in the report; a finding about one run
(the split's, the coolest run's wobble) is tested on that temperature alone, the others
pooled over temperatures. Then the finding is

* the prompt's: some metric is worse with the full context by at least its minimum
  change, significantly; the finding keeps its severity;
* the model's: no metric is worse by the minimum change; what the control shows as
  much is a property of the model and its settings, so the finding is ``info``;
* inconclusive: worse by the minimum change but not significantly (too few seeds to
  tell); the finding drops one level (``fail`` to ``warn``, ``warn`` to ``info``): a
  finding blames the context only when the context's effect is shown.

Every decided finding carries the comparison in ``evidence["control"]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import msgspec

from diagnose.report import ControlRun, Finding, SamplingReport
from diagnose.sampling.paired_measures import METRICS, Side
from diagnose.stats import proportion_test
from diagnose.sampling.paired_tests import Outcome, SignificanceSettings, compare
from diagnose.stats import bonferroni
from diagnose.sampling.pull import NONE
from diagnose.decode.engine import Trace

COMPETING_PULL = "competing_pull"
"""The split's metric: the share of samples that follow a center other than the control's (and
not "none"). Unlike ``center_split`` it does not count samples that follow no center, which a
weak model gives with or without the competing documents."""
NO_CENTER = "no_center"
"""The noise's metric: the share of samples that follow no center ("none"): off-topic passages that
dilute the pull leave more samples answering from none of the centers. (Samples following another
center are the split's.)"""
CENTER_MIN_CHANGE = METRICS["center_split"].min_change

CONTROLLED: dict[str, tuple[str, ...]] = {
    "input.noise_share": (NO_CENTER, "semantic_entropy"),
    "sampling.split_center_pull": (COMPETING_PULL,),
    "sampling.weak_pull": ("semantic_entropy", "first_token_divergence"),
    "sampling.strong_pull": ("repetition_rate",),
    "length.truncated": ("truncation_rate",),
}
"""The findings that blame the context, and the metrics (``diagnose.sampling.paired_measures.METRICS``) that decide each."""

MODEL_ADVICE: dict[str, str] = {
    "input.noise_share": "The answers follow one of the centers as often, and agree as much, with the off-topic "
    "passages as without them: here they cost prompt tokens but did not pull the answers away.",
    "sampling.split_center_pull": "The samples split as often without the competing documents: the model "
    "does not settle on one answer even when the context agrees with itself.",
    "sampling.weak_pull": "The samples disagree as much without the rest of the context: the wobble is the "
    "model's and its sampling settings', not the documents'. A more capable model, or a lower temperature "
    "for this model, is what changes it.",
    "sampling.strong_pull": "The outputs repeat themselves as much without the rest of the context: the "
    "loops are the model's and its settings'. A mild repetition penalty (1.05-1.15) or a moderate "
    "temperature is what changes them.",
    "length.truncated": "The answers run past max_new_tokens as often without the rest of the context: "
    "the model's verbosity at these settings, not the prompt's. Raise max_new_tokens, or ask for a "
    "short answer.",
}


LOWER: dict[str, str] = {"fail": "warn", "warn": "info", "info": "info"}
"""An inconclusive finding's severity: one level down."""


@dataclass(frozen=True)
class _Tested:
    rule: str
    metric: str
    test: str
    better: int
    min_change: float
    before: float
    after: float
    diff: float
    p: float


def decide(findings: Sequence[Finding], sampling: SamplingReport, traces: Sequence[Trace],
           control: ControlRun, control_traces: Sequence[Trace], settings: SignificanceSettings = SignificanceSettings()) -> list[Finding]:
    """``findings`` with each one of :data:`CONTROLLED` decided against ``control`` (module docstring).

    ``traces`` / ``control_traces``: the main run's and the control's decoded rows."""
    every = _pairs(sampling, traces, control, control_traces)
    tested: list[_Tested] = []
    for finding in findings:
        # A finding about one run (the split's, the coolest run's wobble) is tested on that run alone.
        at = finding.evidence.get("temperature")
        pairs = [pair for pair in every if at is None or pair[1].run.temperature == at]
        for name in CONTROLLED.get(finding.rule, ()):
            if name in (COMPETING_PULL, NO_CENTER):
                outcome = _center_rate(name, pairs, control.center) if pairs and control.center else None
                test, better, least = "fisher_exact", -1, CENTER_MIN_CHANGE
            else:
                metric = METRICS[name]
                outcome = compare(metric, pairs, settings) if pairs else None
                test, better, least = metric.test, metric.better, metric.min_change
            if outcome is not None:
                tested.append(_Tested(finding.rule, name, test, better, least, outcome.before, outcome.after,
                                      outcome.diff, outcome.p))
    return [_decided(f, [t for t in tested if t.rule == f.rule], len(tested), control, settings)
            if f.rule in CONTROLLED else f for f in findings]


def _pairs(sampling: SamplingReport, traces: Sequence[Trace], control: ControlRun,
           control_traces: Sequence[Trace]) -> list[tuple[Side, Side]]:
    """(control, full) per temperature: ``compare`` reads the first as before, the second as after."""
    out = []
    for run in sampling.runs:
        twin = next((c for c in control.runs if c.temperature == run.temperature), None)
        if twin is None:
            continue
        full = Side(run, [tr for tr in traces if tr.row.temperature == run.temperature])
        ctrl = Side(twin, [tr for tr in control_traces if tr.row.temperature == run.temperature])
        out.append((ctrl, full))
    return out


def _center_rate(name: str, pairs: list[tuple[Side, Side]], center: str) -> Outcome | None:
    """Control against full context: the share of samples following a center other than ``center``,
    not "none" (:data:`COMPETING_PULL`), or following "none" (:data:`NO_CENTER`)."""
    def off(c: str) -> bool:
        return c == NONE if name == NO_CENTER else c not in (center, NONE)

    def count(sides: list[Side]) -> tuple[int, int]:
        followed = [s.center for side in sides for s in side.run.samples]
        return sum(off(c) for c in followed), len(followed)

    (kb, nb), (ka, na) = count([c for c, _ in pairs]), count([f for _, f in pairs])
    if not nb or not na:
        return None
    return Outcome(kb / nb, ka / na, ka / na - kb / nb, proportion_test(kb, nb, ka, na))


def _decided(finding: Finding, tests: list[_Tested], family: int, control: ControlRun, settings: SignificanceSettings) -> Finding:
    rows = []
    for t in tests:
        worse_by = t.diff * -t.better
        rows.append({"metric": t.metric, "test": t.test, "full_context": round(t.after, 4),
                     "control": round(t.before, 4), "diff": round(t.diff, 4), "min_change": t.min_change,
                     "p": round(t.p, 4), "p_adjusted": round(bonferroni(t.p, family), 4),
                     "worse_by_min_change": worse_by >= t.min_change})
    if not rows:
        attributed = "untested"
    elif any(r["worse_by_min_change"] and r["p_adjusted"] < settings.alpha for r in rows):
        attributed = "prompt"
    elif any(r["worse_by_min_change"] for r in rows):
        attributed = "inconclusive"
    else:
        attributed = "model"
    severity = {"prompt": finding.severity, "untested": finding.severity, "model": "info",
                "inconclusive": LOWER[finding.severity]}[attributed]
    evidence = {**finding.evidence, "control": {
        "variant": control.variant, "description": control.description, "documents": control.documents,
        "center": control.center,
        "attributed": attributed, "uncontrolled_severity": finding.severity, "alpha": settings.alpha, "tests_in_family": family, "tests": rows}}
    advice = finding.advice
    if attributed == "model":
        advice = f"Compared with {control.description} (same model, seeds and settings). {MODEL_ADVICE[finding.rule]}"
    elif attributed == "inconclusive":
        advice = (f"Worse than with {control.description}, but not significantly at these seeds (more seeds "
                  f"would tell). {advice}")
    return msgspec.structs.replace(finding, severity=severity, evidence=evidence, advice=advice)
