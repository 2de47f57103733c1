"""pytest plugin: diagnose prompt cases inside a test suite and assert on the reports.

Registered through the ``pytest11`` entry point, so installing rag-diagnose
makes the fixtures available everywhere::

    from diagnose.pytest_plugin import assert_no_conflict, assert_semantic_entropy_below

    def test_bridge_prompt(diagnose_case):
        report = diagnose_case("cases/bridge.yaml", mode="run")
        assert_no_conflict(report)
        assert_semantic_entropy_below(report, 0.5, temperature=0.7)

Fixtures:

- ``diagnoser`` (session): one :class:`~diagnose.pipeline.Diagnoser` built from
  ``Settings.from_env()``; models load lazily, once per test session.
- ``diagnose_case``: a callable ``(case_or_path, mode="inputs"|"run") -> Report``.

Each ``assert_*`` helper raises ``AssertionError`` saying what failed, the measured
value against the threshold, and the report's top three findings. Importing this
module loads no model and no torch.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pytest

from diagnose.case import Case, case_from_dict
from diagnose.report import SEVERITY_RANK, Finding, Report, Severity, TemperatureRun

if TYPE_CHECKING:
    from diagnose.pipeline import Diagnoser

__all__ = [
    "assert_center_pull_at_least",
    "assert_no_conflict",
    "assert_no_findings",
    "assert_semantic_entropy_below",
    "format_top_findings",
]

Mode = Literal["inputs", "run"]
DiagnoseCase = Callable[..., Report]

_TOP = 3
_TEMPERATURE_TOLERANCE = 1e-6


@pytest.fixture(scope="session")
def diagnoser() -> "Diagnoser":
    """One Diagnoser for the session (settings from ``RAG_DIAGNOSE_*`` variables)."""
    from diagnose.pipeline import Diagnoser
    from diagnose.settings import Settings

    return Diagnoser.from_settings(Settings.from_env())


@pytest.fixture
def diagnose_case(diagnoser: "Diagnoser") -> DiagnoseCase:
    """``diagnose_case(case_or_path, mode="inputs"|"run") -> Report``.

    ``case_or_path`` is a Case, a mapping of case fields, or a YAML/JSON case file.
    ``mode="inputs"`` runs the input stage only (no sampling); ``"run"`` the whole pipeline.
    """

    def run(case_or_path: Case | Mapping[str, Any] | str | Path, mode: Mode = "inputs") -> Report:
        case = _as_case(case_or_path)
        if mode == "inputs":
            return diagnoser.inputs(case)
        if mode == "run":
            return diagnoser.run(case)
        raise ValueError(f"mode must be 'inputs' or 'run', got {mode!r}")

    return run


def _as_case(value: Case | Mapping[str, Any] | str | Path) -> Case:
    if isinstance(value, Case):
        return value
    if isinstance(value, Mapping):
        return case_from_dict(dict(value))
    from diagnose.case_file import load_case

    return load_case(value)


# ---------------------------------------------------------------- assertions


def assert_no_conflict(report: Report) -> None:
    """The documents form no competing gravity centers (``input.conflict.detected`` is false)."""
    __tracebackhide__ = True
    conflict = report.input.conflict
    if not conflict.detected:
        return
    centers = ", ".join(
        f"{c.id} {c.label!r} (mass {c.mass:.2f}, {len(c.documents)} docs)"
        for c in report.input.gravity_centers
    )
    lines = [
        f"case {report.case_id!r}: the documents conflict (conflict score {conflict.score:.3f}); "
        f"expected no conflicting gravity centers",
        f"centers: {centers or 'none'}",
    ]
    lines += [f"  {p.a} vs {p.b} [{p.kind}]: {p.evidence}" for p in conflict.pairs[:_TOP]]
    _fail(report, lines)


def assert_semantic_entropy_below(report: Report, threshold: float, temperature: float) -> None:
    """``semantic_entropy`` of the run at ``temperature`` is below ``threshold`` (nats)."""
    __tracebackhide__ = True
    run = _run_at(report, temperature)
    if run.semantic_entropy < threshold:
        return
    _fail(
        report,
        [
            f"case {report.case_id!r}: semantic entropy at temperature {temperature:g} is "
            f"{run.semantic_entropy:.3f} nats, expected below {threshold:g} "
            f"({_cluster_count(run)} meaning clusters in {run.n} samples)"
        ],
    )


def assert_no_findings(report: Report, severity: Severity = "warn") -> None:
    """No finding at ``severity`` or worse (``info`` < ``warn`` < ``fail``)."""
    __tracebackhide__ = True
    if severity not in SEVERITY_RANK:
        raise ValueError(f"severity must be one of {sorted(SEVERITY_RANK)}, got {severity!r}")
    floor = SEVERITY_RANK[severity]
    hits = [f for f in report.findings if SEVERITY_RANK[f.severity] >= floor]
    if not hits:
        return
    _fail(
        report,
        [
            f"case {report.case_id!r}: {len(hits)} finding(s) at severity {severity!r} or worse, "
            f"expected none (verdict {report.verdict!r}): {', '.join(f.rule for f in hits)}"
        ],
        hits,
    )


def assert_center_pull_at_least(
    report: Report, center: str, share: float, temperature: float
) -> None:
    """At least ``share`` of the samples at ``temperature`` follow ``center`` (an id or a label)."""
    __tracebackhide__ = True
    run = _run_at(report, temperature)
    center_id = _center_id(report, center)
    measured = run.center_pull.get(center_id, 0.0)
    if measured >= share:
        return
    pulls = ", ".join(f"{k}: {v:.2f}" for k, v in sorted(run.center_pull.items(), key=lambda kv: -kv[1]))
    _fail(
        report,
        [
            f"case {report.case_id!r}: center {_describe_center(report, center_id)} pulls "
            f"{measured:.2f} of the samples at temperature {temperature:g}, expected at least {share:g}",
            f"center pull: {pulls or 'none'}",
        ],
    )


def format_top_findings(findings: list[Finding], limit: int = _TOP) -> str:
    """The ``limit`` most severe findings, one line each: severity, rule, first sentence of advice."""
    if not findings:
        return "top findings: none"
    ranked = sorted(findings, key=lambda f: -SEVERITY_RANK[f.severity])[:limit]
    lines = [f"top findings ({len(ranked)} of {len(findings)}):"]
    lines += [f"  - [{f.severity}] {f.rule}: {_first_sentence(f.advice)}" for f in ranked]
    return "\n".join(lines)


# ---------------------------------------------------------------- helpers


def _fail(report: Report, lines: list[str], findings: list[Finding] | None = None) -> None:
    __tracebackhide__ = True
    message = "\n".join([*lines, format_top_findings(report.findings if findings is None else findings)])
    raise AssertionError(message)


def _run_at(report: Report, temperature: float) -> TemperatureRun:
    __tracebackhide__ = True
    if report.sampling is None:
        raise AssertionError(
            f"case {report.case_id!r}: the report has no sampling runs "
            f"(diagnosed with mode='inputs'); use mode='run' for sampling assertions"
        )
    for run in report.sampling.runs:
        if abs(run.temperature - temperature) <= _TEMPERATURE_TOLERANCE:
            return run
    sampled = ", ".join(f"{r.temperature:g}" for r in report.sampling.runs)
    raise AssertionError(
        f"case {report.case_id!r}: no sampling run at temperature {temperature:g}; "
        f"the case sampled [{sampled}] (set sampling.temperatures)"
    )


def _center_id(report: Report, center: str) -> str:
    __tracebackhide__ = True
    centers = report.input.gravity_centers
    for c in centers:
        if c.id == center:
            return c.id
    for c in centers:
        if c.label.strip().casefold() == center.strip().casefold():
            return c.id
    known = ", ".join(f"{c.id} {c.label!r}" for c in centers) or "none"
    raise AssertionError(
        f"case {report.case_id!r}: no gravity center with id or label {center!r}; centers: {known}"
    )


def _describe_center(report: Report, center_id: str) -> str:
    label = next((c.label for c in report.input.gravity_centers if c.id == center_id), "")
    return f"{center_id} {label!r}" if label else center_id


def _cluster_count(run: TemperatureRun) -> int:
    return len({s.cluster for s in run.samples}) if run.samples else 0


_SENTENCE_END = re.compile(r"(?<!e\.g\.)(?<!i\.e\.)(?<=[.!?])\s+(?=[A-Z(\"'])")


def _first_sentence(text: str) -> str:
    return _SENTENCE_END.split(text.strip(), maxsplit=1)[0]
