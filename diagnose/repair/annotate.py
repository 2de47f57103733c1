"""Words for verified repairs: each repair's one-line summary, the findings' notes, the headline."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from diagnose.report import Finding, Repair, RepairTest, SkippedRepair
from diagnose.sampling.paired_measures import METRICS

VERIFIED = ("fixes", "helps")


def format_p(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}" if p < 0.1 else f"p = {p:.2f}"


def format_change(test: RepairTest) -> str:
    """'−0.69 nats semantic entropy' or 'center split 50% → 0%'."""
    metric = METRICS[test.metric]
    if metric.unit == "nats":
        return f"{_signed(test.diff)} nats {metric.label}"
    return f"{metric.label} {test.before:.0%} → {test.after:.0%}"


def format_temperatures(temperatures: Sequence[float]) -> str:
    shown = ", ".join(f"{t:g}" for t in temperatures)
    return f"at T {shown}" if len(temperatures) == 1 else f"over T {shown}"


def lead_test(tests: Sequence[RepairTest]) -> RepairTest | None:
    """The test that best tells what the repair did: the strongest significant target
    improvement, else any significant worsening, else the target with the smallest p."""
    for wanted in (lambda t: t.role == "target" and t.outcome == "better", lambda t: t.outcome == "worse",
                   lambda t: t.role == "target"):
        chosen = [t for t in tests if wanted(t)]
        if chosen:
            return min(chosen, key=lambda t: (t.p_adjusted, -abs(t.diff)))
    return None


def summary_line(verdict: str, tests: Sequence[RepairTest], temperatures: Sequence[float]) -> str:
    """e.g. 'fixes: center split 50% → 0% at T 0.7 (Bonferroni p < 0.001)'."""
    test = lead_test(tests)
    if test is None:
        return f"{verdict}: nothing measured"
    return f"{verdict}: {format_change(test)} {format_temperatures(temperatures)} (Bonferroni {format_p(test.p_adjusted)})"


def annotate_findings(findings: Sequence[Finding], repairs: Sequence[Repair]) -> list[Finding]:
    """Each finding a repair answered gets ``evidence.repairs`` (every repair tried for it,
    best first); one whose advice a repair verified also gets ``evidence.verified`` and a
    closing sentence in its advice naming the repair."""
    out = []
    for finding in findings:
        tried = [r for r in repairs if finding.rule in r.answers]
        if not tried:
            out.append(finding)
            continue
        evidence = {**finding.evidence, "repairs": [{"id": r.id, "verdict": r.verdict} for r in tried]}
        advice = finding.advice
        best = tried[0]
        if best.verdict in VERIFIED:
            evidence["verified"] = {"repair": best.id, "verdict": best.verdict, "summary": best.summary}
            advice = f"{advice} Verified on this prompt: {best.summary.split(': ', 1)[-1]} (repair {best.id})."
        out.append(msgspec.structs.replace(finding, evidence=evidence, advice=advice))
    return out


def headline(repairs: Sequence[Repair], skipped: Sequence[SkippedRepair]) -> str:
    """The summary's first line: the best verified repair, or why there is none."""
    more = f"; {len(skipped)} skipped (budget)" if skipped else ""
    if not repairs:
        return f"no repair sampled{more}" if skipped else "no repair to try: no finding calls for a change"
    best = repairs[0]
    if best.verdict in VERIFIED:
        return f"best verified repair: {best.id} ({best.summary}); {len(repairs)} tried{more}"
    return f"no verified repair: {len(repairs)} tried, none significantly better{more}"


def _signed(value: float) -> str:
    return f"{value:+.2f}".replace("-", "−")
