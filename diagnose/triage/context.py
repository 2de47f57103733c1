"""What a triage rule may read: the case, the stage reports, the environment, the thresholds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from diagnose.case import Case
from diagnose.report import Finding, InputReport, SamplingReport, Severity, Stage, TemperatureRun
from diagnose.sampling.settings import SamplingSettings
from diagnose.triage.thresholds import TriageThresholds


@dataclass(frozen=True)
class DeterminismCheck:
    """The same seed decoded alone and inside the full batch."""

    temperature: float
    seed: int
    batch_tokens: int
    alone_tokens: int
    first_mismatch: int | None
    """First position where the two token sequences differ; None when identical."""

    @property
    def reproducibility(self) -> str:
        """The report's ``environment.reproducibility``, as measured here: ``per_seed`` (a seed gave
        the same tokens alone and in the batch) or ``per_batch_composition`` (it did not: the same
        seed reproduces only in a batch of the same rows)."""
        return "per_seed" if self.first_mismatch is None else "per_batch_composition"


@dataclass(frozen=True)
class TriageContext:
    case: Case
    inputs: InputReport
    sampling: SamplingReport | None
    environment: dict[str, Any]
    thresholds: TriageThresholds
    sampling_settings: SamplingSettings = SamplingSettings()
    """What the sampling stage measured with (its regex limits are named in evidence)."""
    determinism: DeterminismCheck | None = None
    baseline_environment: dict[str, Any] | None = None
    """A previous run's environment to compare with (``run --baseline``)."""

    def runs_by_temperature(self) -> list[TemperatureRun]:
        return sorted(self.sampling.runs, key=lambda r: r.temperature) if self.sampling else []


@dataclass(frozen=True)
class Flag:
    """What a check returns when its rule fires."""

    severity: Severity
    evidence: dict[str, Any]
    """The values the check read, with the thresholds it compared them to."""
    advice: str


Check = Callable[[TriageContext], "Flag | None"]


@dataclass(frozen=True)
class Rule:
    """One checklist item. ``id`` and the advice text are user-visible: renaming breaks users."""

    id: str
    stage: Stage
    check: Check

    def apply(self, context: TriageContext) -> Finding | None:
        flag = self.check(context)
        if flag is None:
            return None
        return Finding(
            stage=self.stage,
            rule=self.id,
            severity=flag.severity,
            evidence=flag.evidence,
            advice=flag.advice,
        )
