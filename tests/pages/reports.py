"""Small hand-made reports (contract section 3 dicts) for the page unit tests."""

from __future__ import annotations

from typing import Any

from diagnose.report import (
    Conflict, DocumentView, Finding, GravityCenter, InputReport, Report, Sample, SamplingReport, TemperatureRun,
)  # fmt: skip


def run(temperature: float, *, semantic_entropy: float = 0.0, divergence: float = 0.0, truncation: float = 0.0,
        compliance: float = 1.0, pull: dict[str, float] | None = None, text: str = "1937.") -> TemperatureRun:
    pull = pull or {"c0": 1.0}
    samples = [Sample(seed=i, text=text, finish_reason="stop", tokens=3, cluster=0, center=next(iter(pull)))
               for i in range(2)]
    return TemperatureRun(temperature=temperature, n=2, first_token_divergence=divergence, mean_entropy=0.5,
                          perplexity=1.5, repetition_rate=0.0, semantic_entropy=semantic_entropy,
                          compliance_rate=compliance, truncation_rate=truncation, center_pull=pull, samples=samples,
                          first_tokens={"19": 2}, entropy_by_position=[0.1, 0.4])


def report(*, case_id: str = "bridge", centers: dict[str, str] | None = None, runs: list[TemperatureRun] | None = None,
           findings: list[tuple[str, str, str]] = (), environment: dict[str, Any] | None = None,
           documents: list[tuple[str, str | None]] | None = None, text: str = "") -> dict[str, Any]:
    """``centers``: id → label; ``findings``: (stage, rule, severity); ``documents``: (id, center id or None)."""
    centers = centers if centers is not None else {"c0": "1937"}
    documents = documents if documents is not None else [("d1", "c0")]
    inp = InputReport(
        gravity_centers=[GravityCenter(id=c, documents=[d for d, dc in documents if dc == c], mass=1 / len(centers),
                                       label=label) for c, label in centers.items()],
        noise_documents=[d for d, c in documents if c is None],
        conflict=Conflict(detected=len(centers) > 1, score=0.8 if len(centers) > 1 else 0.0),
        documents=[DocumentView(id=d, center=c, relevance=0.75, tokens=10, position=[float(i), 0.5])
                   for i, (d, c) in enumerate(documents)],
    )
    found = [Finding(stage=stage, rule=rule, severity=severity, evidence={"note": text}, advice=f"Advice for {rule}. {text}")
             for stage, rule, severity in findings]
    severities = {f.severity for f in found}
    verdict = "fail" if "fail" in severities else "warn" if "warn" in severities else "ok"
    return Report(case_id=case_id, verdict=verdict, input=inp, findings=found,
                  environment=environment if environment is not None else {"model_id": "tiny", "dtype": "float32"},
                  sampling=SamplingReport(runs=runs, backend="fake") if runs is not None else None).to_dict()


def case(case_id: str = "bridge", texts: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    texts = texts or ["The bridge opened in 1937."]
    return {"id": case_id, "question": "When did the bridge open?",
            "documents": [{"id": f"d{i + 1}", "text": t} for i, t in enumerate(texts)], **extra}
