"""The regression gate: compare one case's report with its baseline, knowing what is noise.

Inputs are :class:`~diagnose.report.Report` objects (a stored one read back with
:func:`~diagnose.report.read_report`, where a field newer than the report takes its
default), so older reports compare too: a missing section, temperature or per-sample
values give an "info" change, never a crash. Per temperature in both:
``semantic_entropy`` / ``first_token_divergence`` regress ("warn") when the
bootstrap CI of the increase excludes 0 and the change reaches the minimum;
``compliance_rate`` (down) / ``truncation_rate`` (up) fail on Fisher p < alpha with
a large enough change; ``center_shift`` fails when another center (matched by
label, else shared documents) now leads with enough share, outside the noise band.
Case-wide: ``new_finding``, ``resolved_finding`` and ``environment`` ("warn"; "info" for the
thread count, which only reorders float sums); a changed environment is attached to every
other regression as ``likely_cause``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

import msgspec

from diagnose.sampling.per_sample import sample_clusters as _clusters
from diagnose.sampling.per_sample import sample_count as _count
from diagnose.sampling.per_sample import sample_first_tokens as _first_tokens
from diagnose.stats import proportion_test, stratified_bootstrap_diff_ci
from diagnose.sampling.metrics import first_token_divergence, semantic_entropy
from diagnose.environment import SUMMATION_ORDER_KEYS, SUMMATION_ORDER_NOTE, fingerprint_diff
from diagnose.nightly.settings import GateSettings
from diagnose.report import SEVERITY_RANK, Finding, InputReport, Report, TemperatureRun

__all__ = ["VERDICT_KIND", "CaseComparison", "Change", "compare_reports", "environment_diff",
           "verdict_change"]

Severity = Literal["info", "warn", "fail"]
#: The kind of the change that carries the case's own verdict (not a comparison with the baseline).
VERDICT_KIND = "verdict"
_CAUSE = {"model_id": "the model", "model_hash": "the model weights", "quantization": "the quantization",
          "dtype": "the dtype", "device": "the device", "backend": "the backend",
          "threads": "the thread count", "cuda": "the CUDA version", "libraries": "the library"}


@dataclass(frozen=True)
class Change:
    """One difference between a case's baseline and current report."""

    kind: str
    """semantic_entropy | first_token_divergence | compliance_rate | truncation_rate |
    center_shift | new_finding | resolved_finding | environment | not_compared
    (a temperature or section missing from one report, so nothing was compared) |
    verdict (the current report's own verdict, "warn" or "fail": a failing prompt
    fails the gate even when it did not regress, and a new case has no baseline)."""
    severity: Severity
    temperature: float | None
    """The temperature run compared; None for case-wide changes."""
    baseline: Any
    current: Any
    evidence: dict[str, Any]
    """The numbers behind the verdict: CI bounds, p-values, thresholds, counts."""
    message: str


@dataclass(frozen=True)
class CaseComparison:
    case_id: str
    changes: list[Change]

    @property
    def regressions(self) -> list[Change]:
        """Changes against the baseline with severity "warn" or "fail" (not the case's own verdict)."""
        return [c for c in self.changes if c.severity in ("warn", "fail") and c.kind != VERDICT_KIND]

    @property
    def failing_verdict(self) -> Change | None:
        """The case's own verdict when it is "warn" or "fail" (gated even without a baseline)."""
        return next((c for c in self.changes if c.kind == VERDICT_KIND and c.severity != "info"), None)

    @property
    def status(self) -> Literal["pass", "warn", "fail"]:
        worst = max((SEVERITY_RANK[c.severity] for c in self.changes), default=0)
        return "fail" if worst == 2 else "warn" if worst == 1 else "pass"

    def to_dict(self) -> dict[str, Any]:
        return {"case_id": self.case_id, "status": self.status,
                "changes": [asdict(c) for c in self.changes]}


def compare_reports(baseline: Report, current: Report, settings: GateSettings = GateSettings()) -> CaseComparison:
    """Compare ``current`` with ``baseline``."""
    env = environment_diff(baseline.environment, current.environment)
    changes = _compare_sampling(baseline, current, settings)
    changes += _compare_findings(baseline.findings, current.findings)
    cause = "; ".join(_env_phrase(key, d) for key, d in env.items())
    changes = [c if c.severity == "info" or not env else replace(
        c, evidence={**c.evidence, "likely_cause": env}, message=f"{c.message} (environment changed: {cause})")
        for c in changes]
    changes += [_environment_change(key, d) for key, d in env.items()]
    return CaseComparison(current.case_id or baseline.case_id, changes)


def verdict_change(report: Report) -> Change | None:
    """The report's own verdict as a gate change: "warn"/"fail" keep their severity, "ok" is none.

    The message names the finding that set the verdict (the first of the verdict's severity)."""
    verdict = report.verdict
    if verdict not in ("warn", "fail"):
        return None
    findings = [f for f in report.findings if f.severity == verdict]
    deciding = report.basis.deciding if report.basis else None  # the finding the report says set its verdict
    cause = next((f for f in findings if f.rule == deciding), findings[0] if findings else None)
    because = f", set by {cause.rule} ({cause.stage})" if cause else ""
    return Change(VERDICT_KIND, verdict, None, None, verdict,
                  {"rule": cause.rule if cause else None, "stage": cause.stage if cause else None,
                   "findings": [f.rule for f in findings]},
                  f"the case's own verdict is {verdict}{because}")


def environment_diff(baseline: dict[str, Any], current: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``{key: {"baseline": b, "current": c}}`` for each differing fingerprint key and library."""
    return {key: {"baseline": before, "current": now}
            for key, (before, now) in fingerprint_diff(baseline, current).items()}


def _environment_change(key: str, d: dict[str, Any]) -> Change:
    """A changed fingerprint key: ``warn``, or ``info`` for one that only reorders float sums."""
    if key in SUMMATION_ORDER_KEYS:
        return Change("environment", "info", None, d["baseline"], d["current"], {"key": key, **d},
                      f"{_env_phrase(key, d)} changed: {SUMMATION_ORDER_NOTE}")
    return Change("environment", "warn", None, d["baseline"], d["current"], {"key": key, **d},
                  f"{_env_phrase(key, d)} changed: differences may come from "
                  f"{_CAUSE.get(key.split('.')[0], key)}, not the prompt")


def _env_phrase(key: str, d: dict[str, Any]) -> str:
    before, now = ("absent" if v is None else v for v in (d["baseline"], d["current"]))
    return f"{key.removeprefix('libraries.')} {before} → {now}"


TESTS_PER_CASE = 5
"""Semantic entropy, first-token divergence, compliance, truncation and center shift:
each is one test per case (pooled over temperatures), so the family-wise error of a
case is held at ``alpha`` (Bonferroni) instead of growing with every temperature."""


def _compare_sampling(baseline: Report, current: Report, s: GateSettings) -> list[Change]:
    b_sampling, c_sampling = baseline.sampling, current.sampling
    if b_sampling is None or c_sampling is None:
        missing = " and ".join(n for n, x in (("baseline", b_sampling), ("current", c_sampling)) if x is None)
        return [Change("not_compared", "info", None, b_sampling is not None, c_sampling is not None,
                       {"missing": missing}, f"no sampling section in the {missing} report (an inputs-only run?): "
                       "sampling metrics were not compared")]
    b_runs = {round(float(r.temperature), 6): r for r in b_sampling.runs}
    c_runs = {round(float(r.temperature), 6): r for r in c_sampling.runs}
    changes: list[Change] = []
    for t in sorted(set(b_runs) ^ set(c_runs)):
        side = "current" if t in b_runs else "baseline"
        changes.append(Change("not_compared", "info", t, t in b_runs, t in c_runs, {"missing": side},
                              f"T={t:g} has no run in the {side} report: not compared"))
    pairs = [(t, b_runs[t], c_runs[t]) for t in sorted(set(b_runs) & set(c_runs))]
    if not pairs:
        return changes
    family = replace(s, alpha=s.alpha / TESTS_PER_CASE,
                     confidence=1.0 - (1.0 - s.confidence) / TESTS_PER_CASE)
    centers = _match_centers(baseline.input, current.input)
    changes += [x for x in (
        _spread_change("semantic_entropy", semantic_entropy, pairs, _clusters, s.min_entropy_change, family),
        _spread_change("first_token_divergence", first_token_divergence, pairs, _first_tokens,
                       s.min_divergence_change, family),
        _rate_change("compliance_rate", -1, pairs, family),
        _rate_change("truncation_rate", +1, pairs, family),
        _center_shift(pairs, centers, family),
    ) if x is not None]
    return changes


Pairs = list[tuple[float, TemperatureRun, TemperatureRun]]
"""(temperature, baseline run, current run) for every temperature in both reports."""


def _spread_change(kind: str, statistic: Callable[[Any], float], pairs: Pairs,
                   values: Callable[[TemperatureRun], list[Any] | None],
                   min_change: float, s: GateSettings) -> Change | None:
    """Mean change over temperatures, with a stratified bootstrap CI (per-temperature resampling).

    ``kind`` names the run's aggregate field of the statistic (shown when per-sample values are missing)."""
    strata = [(values(b), values(c)) for _, b, c in pairs]
    per_t = {f"{t:g}": [getattr(b, kind), getattr(c, kind)] for t, b, c in pairs}
    if any(b is None or c is None for b, c in strata):
        if all(before == now for before, now in per_t.values()):
            return None
        return Change(kind, "info", None, None, None, {"reason": "per-sample values missing", "per_temperature": per_t},
                      f"{kind} changed ({per_t}); untested: a report lacks per-sample values")
    diff, low, high = stratified_bootstrap_diff_ci(statistic, strata, resamples=s.resamples,
                                                   confidence=s.confidence, seed=s.seed)
    before = sum(statistic(b) for b, _ in strata) / len(strata)
    now = sum(statistic(c) for _, c in strata) / len(strata)
    evidence = {"diff": diff, "ci_low": low, "ci_high": high, "confidence": s.confidence,
                "resamples": s.resamples, "seed": s.seed, "min_change": min_change,
                "per_temperature": per_t, "n_baseline": [len(b) for b, _ in strata],
                "n_current": [len(c) for _, c in strata]}
    band = f"{s.confidence:.1%} CI [{low:+.2f}, {high:+.2f}]"
    if low > 0 and diff >= min_change:
        return Change(kind, "warn", None, before, now, evidence,
                      f"{kind} (mean over temperatures) rose {before:.2f} → {now:.2f} ({diff:+.2f}, "
                      f"{band} excludes 0; minimum {min_change:g})")
    if high < 0 and -diff >= min_change:
        return Change(kind, "info", None, before, now, evidence,
                      f"{kind} (mean over temperatures) fell {before:.2f} → {now:.2f} ({diff:+.2f}, {band}): "
                      "an improvement")
    return None


def _rate_change(kind: str, bad_sign: int, pairs: Pairs, s: GateSettings) -> Change | None:
    """Counts pooled over temperatures, one Fisher exact test."""
    counts = [(_count(b, kind), _count(c, kind)) for _, b, c in pairs]
    if any(b is None or c is None for b, c in counts):
        return None
    bk, bn = sum(b[0] for b, _ in counts), sum(b[1] for b, _ in counts)
    ck, cn = sum(c[0] for _, c in counts), sum(c[1] for _, c in counts)
    change = ck / cn - bk / bn
    p = proportion_test(bk, bn, ck, cn)
    if p >= s.alpha or abs(change) < s.min_rate_change:
        return None
    evidence = {"baseline_k": bk, "baseline_n": bn, "current_k": ck, "current_n": cn, "change": change,
                "p_value": p, "alpha": s.alpha, "min_change": s.min_rate_change, "test": "fisher_exact",
                "per_temperature": {f"{t:g}": [f"{b[0]}/{b[1]}", f"{c[0]}/{c[1]}"]
                                    for (t, _, _), (b, c) in zip(pairs, counts)}}
    worse = change * bad_sign > 0
    return Change(kind, "fail" if worse else "info", None, bk / bn, ck / cn, evidence,
                  f"{kind} went {bk}/{bn} → {ck}/{cn} over all temperatures (Fisher p={p:.3g} < {s.alpha:.3g})"
                  + ("" if worse else ": an improvement"))


def _match_centers(b_input: InputReport, c_input: InputReport) -> tuple[dict[str, str], dict[str, str]]:
    """``(current id → canonical key, key → label)``: keys are baseline ids, or ``new:<id>`` when unmatched.

    Matched by normalised label, else by the baseline center sharing the most
    document ids. Without centers on either side, ids are taken as they are.
    """
    b_centers, c_centers = b_input.gravity_centers, c_input.gravity_centers
    labels = {x.id: x.label for x in b_centers}
    if not b_centers or not c_centers:
        return {}, labels
    norm = lambda label: " ".join(label.lower().split())  # noqa: E731
    by_label = {norm(x.label): x.id for x in b_centers if norm(x.label)}
    mapping: dict[str, str] = {}
    for x in c_centers:
        docs = set(x.documents)
        key = by_label.get(norm(x.label)) if norm(x.label) else None
        if key is None:
            overlaps = [(len(docs & set(y.documents)), -i, y.id) for i, y in enumerate(b_centers)]
            best = max(overlaps)
            key = best[2] if best[0] > 0 else f"new:{x.id}"
        mapping[x.id] = key
        labels.setdefault(key, x.label)
    return mapping, labels


def _center_shift(pairs: Pairs, centers: tuple[dict[str, str], dict[str, str]], s: GateSettings) -> Change | None:
    """Samples per center pooled over temperatures: does another center now lead?"""
    mapping, labels = centers
    b_count: dict[str, float] = {}
    c_count: dict[str, float] = {}
    bn = cn = 0
    for _, b, c in pairs:
        nb, nc = int(b.n or len(b.samples)), int(c.n or len(c.samples))
        bn, cn = bn + nb, cn + nc
        for k, v in b.center_pull.items():
            b_count[k] = b_count.get(k, 0.0) + float(v) * nb
        for k, v in c.center_pull.items():
            key = mapping.get(k, k)
            c_count[key] = c_count.get(key, 0.0) + float(v) * nc
    if not b_count or not c_count or not bn or not cn:
        return None
    b_pull = {k: v / bn for k, v in b_count.items()}
    c_pull = {k: v / cn for k, v in c_count.items()}
    b_top = {k for k, v in b_pull.items() if v >= max(b_pull.values()) - 1e-9}
    c_top = {k for k, v in c_pull.items() if v >= max(c_pull.values()) - 1e-9}
    if not b_top.isdisjoint(c_top):
        return None
    old, new = sorted(b_top)[0], sorted(c_top)[0]
    p_loss = proportion_test(round(b_count[old]), bn, round(c_count.get(old, 0.0)), cn)
    p_gain = proportion_test(round(b_count.get(new, 0.0)), bn, round(c_count[new]), cn)
    evidence = {"baseline_winner": old, "current_winner": new, "baseline_pull": b_pull,
                "current_pull": c_pull, "center_map": mapping, "new_winner_share": c_pull[new],
                "min_share": s.center_shift_min_share, "p_value_old_winner_loss": p_loss,
                "p_value_new_winner_gain": p_gain, "alpha": s.alpha, "samples": [bn, cn]}
    name = lambda k: "no center" if k == "none" else (  # noqa: E731
        f"{k.removeprefix('new:')} ('{labels.get(k, '')}'{', new' if k.startswith('new:') else ''})")
    text = (f"center pull over all temperatures: {name(old)} led with {b_pull[old]:.0%} of samples, now "
            f"{name(new)} leads with {c_pull[new]:.0%} (Fisher p={min(p_loss, p_gain):.3g})")
    if min(p_loss, p_gain) < s.alpha and c_pull[new] >= s.center_shift_min_share:
        return Change("center_shift", "fail", None, old, new, evidence, text)
    return Change("center_shift", "info", None, old, new, evidence, f"{text}: inside the noise band")


DETERMINISTIC_STAGES = ("input", "environment")
"""Findings of these stages depend only on the case and the environment, so a new one is a
real change; sampling, length and framework findings move with the samples and are info."""


def _compare_findings(baseline: list[Finding], current: list[Finding]) -> list[Change]:
    """Findings keyed by rule id (the most severe one per rule): new, worsened and resolved ones.

    A change carries the findings in their JSON form, as the gate's summary stores them."""
    rank = lambda f: SEVERITY_RANK[f.severity]  # noqa: E731
    before = {f.rule: f for f in sorted(baseline, key=rank)}
    now = {f.rule: f for f in sorted(current, key=rank)}

    def temp(f: Finding) -> float | None:
        value = f.evidence.get("temperature")
        return float(value) if isinstance(value, (int, float)) else None

    def plain(f: Finding | None) -> dict[str, Any] | None:
        return None if f is None else msgspec.to_builtins(f)

    changes: list[Change] = []
    for rule, f in now.items():
        sev, old = f.severity, before.get(rule)
        if old is not None and SEVERITY_RANK[sev] <= rank(old):
            continue
        if f.stage not in DETERMINISTIC_STAGES:
            sev = "info"  # it follows the samples; their metrics are gated by the tests above
        found = plain(f)
        evidence = {"rule": rule, "stage": f.stage, "finding_evidence": found["evidence"]}
        what = "new finding" if old is None else f"finding worsened from {old.severity}:"
        changes.append(Change("new_finding", sev, temp(f), plain(old), found, evidence,
                              f"{what} {rule} ({f.stage}, {sev}): {f.advice}".rstrip(": ")))
    changes += [Change("resolved_finding", "info", temp(f), plain(f), None, {"rule": rule, "stage": f.stage},
                       f"finding {rule} ({f.stage}, {f.severity}) is resolved")
                for rule, f in before.items() if rule not in now]
    return changes
