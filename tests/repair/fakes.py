"""A fake model that follows the documents' values, and the pieces to diagnose with it.

The fake's vocabulary holds two years; at each step it puts equal logits on every
year that appears in the prompt, then ends. Two documents that disagree on the year
therefore split the samples about evenly, and a case that keeps one of them does not.
"""

from __future__ import annotations

from dataclasses import dataclass

from diagnose.case import Case, Document, SamplingSpec
from diagnose.inputs import InputSettings, analyze_inputs
from diagnose.prompt import build_messages
from diagnose.decode.fake import FakeBackend
from diagnose.sampling.stage import run_sampling
from diagnose.triage import TriageContext, TriageThresholds, triage
from tests.fakes import WordEmbedder

VOCAB = ["<eos>", "<unk>", "1937", "1952"]
YEARS = (2, 3)


def follows_the_documents(history: list[int]) -> list[float]:
    """A year from the prompt (each present one equally likely), then the end."""
    if history and history[-1] in YEARS:
        return [9.0, -20.0, -20.0, -20.0]
    return [-20.0, -20.0, *(3.0 if year in history else -20.0 for year in YEARS)]


def backend() -> FakeBackend:
    return FakeBackend(VOCAB, follows_the_documents)


def bridge_case(*years: str, seeds: int = 16, temperatures=(0.7, 1.2), top_k: int = 0, top_p: float = 1.0,
                system: str | None = None, **extra) -> Case:
    """One document per year (words the fake knows are separated by spaces)."""
    return Case(
        id="bridge", question="When was the Golden Gate Bridge opened to traffic ?", system=system,
        documents=[Document(id=f"d{i}", text=f"The Golden Gate Bridge opened to traffic in {year} and was the "
                                               "longest suspension span in the world .")
                   for i, year in enumerate(years, 1)],
        sampling=SamplingSpec(seeds=seeds, temperatures=list(temperatures), max_new_tokens=4,
                              top_k=top_k, top_p=top_p),
        **extra,
    )


@dataclass
class Diagnosed:
    case: Case
    backend: FakeBackend
    embedder: WordEmbedder
    analysis: object
    sampling: object
    traces: list
    findings: list
    thresholds: TriageThresholds


def diagnose_fake(case: Case, thresholds: TriageThresholds = TriageThresholds()) -> Diagnosed:
    """Input stage (static), sampling and triage on the fake, as the pipeline wires them."""
    fake, embedder = backend(), WordEmbedder()
    analysis = analyze_inputs(case, embedder, InputSettings(), count_tokens=fake.count_tokens)
    sampling, traces = run_sampling(case, fake, fake.chat_ids(build_messages(case)), embedder, analysis)
    context = TriageContext(case=case, inputs=analysis.report, sampling=sampling, environment={},
                            thresholds=thresholds)
    return Diagnosed(case, fake, embedder, analysis, sampling, traces, triage(context), thresholds)


def repair_fake(done: Diagnosed, **kwargs):
    from diagnose.repair import run_repairs

    return run_repairs(done.case, done.analysis, done.sampling, done.traces, done.findings,
                       backend=done.backend, embedder=done.embedder, counter=done.backend,
                       thresholds=done.thresholds, environment={}, **kwargs)
