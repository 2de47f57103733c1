"""View model of two diagnoses side by side: findings new/resolved, metrics with deltas, environment.

``baseline`` is the older diagnosis (left), ``current`` the newer one (right);
both are stored reports in the JSON form of contract section 3.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from api.pages import format as fmt
from api.pages.diagnoses import page_href
from api.pages.queries import DiagnosisDetail
from diagnose.environment import fingerprint_diff

METRICS: tuple[tuple[str, str, int], ...] = (
    ("semantic_entropy", "semantic entropy", +1),
    ("first_token_divergence", "first-token divergence", +1),
    ("truncation_rate", "truncation rate", +1),
    ("compliance_rate", "compliance rate", -1),
)
"""(report key, label, direction): direction +1 means an increase is a regression."""


@dataclass(frozen=True, slots=True)
class FindingItem:
    stage: str
    rule: str
    severity: str
    advice: str
    mark: str
    """``new`` (only in current), ``resolved`` (only in baseline), ``changed`` (other severity) or ""."""


@dataclass(frozen=True, slots=True)
class Side:
    id: str
    short_id: str
    href: str
    case_id: str
    verdict: str
    created: str
    mode: str
    findings: list[FindingItem]


@dataclass(frozen=True, slots=True)
class DeltaCell:
    baseline: str
    current: str
    delta: str
    trend: str
    """``worse``, ``better``, ``same`` or "" (no direction, or one side missing)."""


@dataclass(frozen=True, slots=True)
class MetricRow:
    metric: str
    cells: list[DeltaCell]
    """One per temperature, in :attr:`MetricTable.temperatures` order."""


@dataclass(frozen=True, slots=True)
class MetricTable:
    temperatures: list[str]
    rows: list[MetricRow]


@dataclass(frozen=True, slots=True)
class EnvRow:
    key: str
    baseline: str
    current: str


@dataclass(frozen=True, slots=True)
class ComparePage:
    baseline: Side
    current: Side
    metrics: MetricTable
    environment: list[EnvRow]
    sampled: bool
    """False when neither report has a sampling section (inputs-only diagnoses)."""


def compare_page(baseline: DiagnosisDetail, current: DiagnosisDetail) -> ComparePage:
    """Both diagnoses must have a report (the controller checks)."""
    a, b = baseline.report or {}, current.report or {}
    found_a, found_b = _findings(a), _findings(b)
    return ComparePage(
        baseline=_side(baseline, [_item(f, _mark(key, f, found_b, "resolved")) for key, f in found_a.items()]),
        current=_side(current, [_item(f, _mark(key, f, found_a, "new")) for key, f in found_b.items()]),
        metrics=metric_table(a, b),
        environment=[EnvRow(key, fmt.value(before), fmt.value(now))
                     for key, (before, now) in fingerprint_diff(a.get("environment") or {},
                                                                b.get("environment") or {}).items()],
        sampled=bool(a.get("sampling") or b.get("sampling")),
    )


def metric_table(baseline: Mapping[str, Any], current: Mapping[str, Any]) -> MetricTable:
    """Each metric, then each center's pull (matched by label), at every temperature of either report."""
    runs_a, runs_b = _runs(baseline), _runs(current)
    temperatures = sorted(set(runs_a) | set(runs_b))
    pairs = [(runs_a.get(t), runs_b.get(t)) for t in temperatures]
    rows = [MetricRow(label, [_cell(_get(a, key), _get(b, key), direction) for a, b in pairs])
            for key, label, direction in METRICS]
    labels_a, labels_b = _center_labels(baseline), _center_labels(current)
    pulls = [(_pull_by_label(a, labels_a), _pull_by_label(b, labels_b)) for a, b in pairs]
    for center in _ordered(pulls):
        rows.append(MetricRow(f"pull · {center}", [_cell(a.get(center), b.get(center), 0) for a, b in pulls]))
    return MetricTable([f"{t:g}" for t in temperatures], rows if temperatures else [])


def _cell(before: float | None, now: float | None, direction: int) -> DeltaCell:
    if before is None or now is None:
        return DeltaCell(fmt.number(before), fmt.number(now), fmt.DASH, "")
    delta = now - before
    shown = fmt.signed(delta)
    if shown == "±0":
        trend = "same"
    else:
        trend = "" if direction == 0 else ("worse" if delta * direction > 0 else "better")
    return DeltaCell(fmt.number(before), fmt.number(now), shown, trend)


def _runs(report: Mapping[str, Any]) -> dict[float, Mapping[str, Any]]:
    sampling = report.get("sampling") or {}
    return {float(run["temperature"]): run for run in sampling.get("runs") or []}


def _get(run: Mapping[str, Any] | None, key: str) -> float | None:
    found = run.get(key) if run else None
    return float(found) if isinstance(found, (int, float)) else None


def _center_labels(report: Mapping[str, Any]) -> dict[str, str]:
    centers = (report.get("input") or {}).get("gravity_centers") or []
    return {c["id"]: str(c.get("label") or c["id"]) for c in centers}


def _pull_by_label(run: Mapping[str, Any] | None, labels: Mapping[str, str]) -> dict[str, float]:
    """Center pull keyed by label: center ids are per report, labels (the answers) carry over."""
    pulls: dict[str, float] = {}
    for center, share in ((run or {}).get("center_pull") or {}).items():
        label = labels.get(center, center)
        pulls[label] = pulls.get(label, 0.0) + float(share)
    return pulls


def _ordered(pulls: list[tuple[dict[str, float], dict[str, float]]]) -> list[str]:
    """Strongest pull first (either side, any temperature), "none" last."""
    strongest: dict[str, float] = {}
    for side in (p for pair in pulls for p in pair):
        for name, share in side.items():
            strongest[name] = max(strongest.get(name, 0.0), share)
    return sorted(strongest, key=lambda n: (n == "none", -strongest[n], n))


def _findings(report: Mapping[str, Any]) -> dict[tuple[str, str], Mapping[str, Any]]:
    return {(str(f.get("stage")), str(f.get("rule"))): f for f in report.get("findings") or []}


def _mark(key: tuple[str, str], finding: Mapping[str, Any], other: Mapping[tuple[str, str], Mapping[str, Any]],
          missing: str) -> str:
    if key not in other:
        return missing
    return "changed" if other[key].get("severity") != finding.get("severity") else ""


def _item(finding: Mapping[str, Any], mark: str) -> FindingItem:
    return FindingItem(str(finding.get("stage")), str(finding.get("rule")), str(finding.get("severity")),
                       str(finding.get("advice") or ""), mark)


def _side(detail: DiagnosisDetail, findings: list[FindingItem]) -> Side:
    s = detail.summary
    return Side(id=s.id, short_id=fmt.short_id(s.id), href=page_href(s.id), case_id=s.case_id, verdict=str((detail.report or {}).get("verdict")),
                created=fmt.when(s.created_at), mode=s.mode, findings=findings)
