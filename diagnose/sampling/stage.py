"""The sampling stage: decode every (temperature, seed) row, then measure each temperature run."""

from __future__ import annotations

import time
from typing import Collection, Sequence

import numpy as np

from diagnose.analysis import InputAnalysis
from diagnose.case import Case
from diagnose.embedding import Embedder
from diagnose.prompt import build_messages
from diagnose.report import Bifurcation, PromptMessage, Sample, SamplingReport, TemperatureRun
from diagnose.sampling import metrics
from diagnose.decode.backend import Backend
from diagnose.sampling.constraints import ConstraintChecker
from diagnose.decode.engine import StepCallback, Trace, decode_rows, rows_for
from diagnose.sampling.pull import attribute_samples
from diagnose.sampling.sample_answers import answer_frame, read_answers
from diagnose.sampling.semantic import answer_clusters, split_clusters
from diagnose.sampling.settings import SamplingSettings


def run_sampling(
    case: Case,
    backend: Backend,
    prompt_ids: Sequence[int],
    embedder: Embedder,
    analysis: InputAnalysis,
    on_step: StepCallback | None = None,
    seed_offset: int = 0,
    settings: SamplingSettings = SamplingSettings(),
) -> tuple[SamplingReport, list[Trace]]:
    """Sample every row, then measure each temperature.

    ``settings`` (``Settings.sampling``) holds the measurements' thresholds
    (:func:`measure_run`) and the limits of the case's regex constraints: one checker spans
    every temperature, so a pattern stopped at its limit is not run again (see
    :class:`ConstraintChecker`).
    """
    started = time.perf_counter()
    rows = rows_for(case.sampling, seed_offset)
    traces = sample_traces(case, backend, prompt_ids, rows, on_step)
    checker = ConstraintChecker(case.constraints, settings.regex_timeout_s, settings.regex_budget_s)
    runs = [
        measure_run(
            case,
            backend,
            [tr for tr in traces if tr.row.temperature == temperature],
            embedder,
            analysis,
            checker,
            settings,
        )
        for temperature in case.sampling.temperatures
    ]
    report = SamplingReport(
        runs=runs, backend=backend.name, wall_seconds=round(time.perf_counter() - started, 3),
        prompt=[PromptMessage(role=m["role"], content=m["content"]) for m in build_messages(case)],
    )
    return report, traces


def sample_traces(case: Case, backend, prompt_ids, rows, on_step: StepCallback | None = None) -> list[Trace]:
    """Decode in-process, or ask a remote server that samples on its side."""
    if not backend.in_process:  # a server: one request per row
        return backend.sample(build_messages(case), rows, case.sampling, on_row=on_step)
    return decode_rows(backend, prompt_ids, rows, case.sampling, on_step)


def measure_run(
    case: Case,
    backend: Backend,
    traces: list[Trace],
    embedder: Embedder,
    analysis: InputAnalysis,
    checker: ConstraintChecker | None = None,
    settings: SamplingSettings = SamplingSettings(),
    kept: Collection[str] | None = None,
) -> TemperatureRun:
    """All contract metrics for one temperature's samples (traces in seed order).

    Metrics the backend cannot compute exactly (``backend.unavailable``, e.g. a
    remote server that returns no processed distribution) are reported as None.
    A regex constraint ``checker`` stopped at its time limit is listed in
    ``unavailable`` as ``constraints[i]``, with ``compliance_rate``, which then
    judges the other constraints only. Without ``checker``, a fresh one with the
    default limits. ``settings`` (``Settings.sampling``): the cosine at which samples
    share a meaning cluster, the similarity and margin at which a sample follows a
    center by resemblance alone, the margin under which a position is a bifurcation.
    ``kept``: the ids of the case's documents the sampled prompt held (a control's or an
    ablation's; None: all of them). A sample follows only a center with a document in
    the prompt: a center whose documents were removed keeps its key in ``center_pull``,
    at 0.
    """
    unavailable = list(getattr(backend, "unavailable", ()))
    # A remote server's own text is exact; its per-token strings can be lossy.
    texts = [(getattr(tr, "text", None) or backend.decode(tr.tokens)).strip() for tr in traces]
    embeddings = embedder.encode(texts) if texts else np.zeros((0, 1), dtype=np.float32)
    centers = analysis.report.gravity_centers
    present = [c for c in centers if kept is None or set(c.documents) & set(kept)]
    doc_index = {doc.id: i for i, doc in enumerate(case.documents)}
    frame = answer_frame(analysis.center_answers, [d.id for d in case.documents], case.document_format)
    answers = read_answers(texts, frame, case.question)
    followed = attribute_samples(
        # What a sample answers decides the center it follows, not the other values it mentions.
        [a.text if a.kind == "answer" else text for a, text in zip(answers, texts)],
        embeddings,
        {c.id: [doc_index[d] for d in c.documents] for c in present},
        analysis.center_answers,
        analysis.doc_embeddings,
        min_similarity=settings.pull_min_similarity,
        min_margin=settings.pull_min_margin,
        claim_embeddings=analysis.claim_embeddings,
    )
    # Samples that follow different centers differ in meaning, however alike their wording.
    clusters = split_clusters(answer_clusters(texts, embeddings, answers, settings.meaning_similarity), followed)
    compliant, unknown = (checker or ConstraintChecker(case.constraints)).check(texts)
    undecided = ["compliance_rate", *(f"constraints[{i}]" for i in unknown)] if unknown else []
    positions = sample_positions(analysis, embeddings)
    first_tokens = [tr.steps[0].token for tr in traces if tr.steps]
    samples = [
        Sample(
            seed=tr.row.seed,
            text=text,
            finish_reason="stop" if tr.finish_reason == "stop" else "length",
            first_token=_token_label(backend, tr.steps[0].token) if tr.steps else "",
            tokens=len(tr.tokens),
            cluster=cluster,
            center=center,
            compliant=ok,
            position=position,
            answer=answer.text,
            answer_kind=answer.kind,
        )
        for tr, text, cluster, center, ok, position, answer
        in zip(traces, texts, clusters, followed, compliant, positions, answers)
    ]
    return TemperatureRun(
        temperature=traces[0].row.temperature,
        n=len(traces),
        first_token_divergence=metrics.first_token_divergence(first_tokens),
        mean_entropy=None
        if "mean_entropy" in unavailable
        else metrics.mean_entropy([[s.entropy for s in tr.steps] for tr in traces]),
        perplexity=None
        if "perplexity" in unavailable
        else metrics.perplexity([[s.raw_logprob for s in tr.steps] for tr in traces]),
        repetition_rate=metrics.repetition_rate([tr.tokens for tr in traces]),
        semantic_entropy=metrics.semantic_entropy(clusters),
        compliance_rate=metrics.compliance_rate(compliant),
        truncation_rate=metrics.truncation_rate([s.finish_reason for s in samples]),
        center_pull=metrics.center_pull(followed, [c.id for c in centers]),
        samples=samples,
        first_tokens=_first_token_counts(backend, first_tokens),
        entropy_by_position=[] if "mean_entropy" in unavailable else _entropy_by_position(traces),
        unavailable=unavailable + undecided,
        bifurcations=_bifurcations(backend, traces, settings.bifurcation_margin),
        temperature_last_divergence=round(metrics.order_divergence([tr.steps for tr in traces]), 4),
        answer_kinds={kind: sum(a.kind == kind for a in answers) for kind in ("answer", "other", "none")},
    )


def sample_positions(analysis: InputAnalysis, embeddings: np.ndarray) -> list[list[float]]:
    """Each sample's place on the document map: its embedding in the documents' 2-D frame.

    Empty for every sample without a frame, and for an empty text (a zero vector
    has no meaning to place; the frame would put it at minus the documents' mean).
    """
    if analysis.projection is None or not len(embeddings):
        return [[] for _ in range(len(embeddings))]
    placed = analysis.projection(embeddings)
    has_vector = np.linalg.norm(embeddings, axis=1) > 0
    return [[float(x) for x in p] if ok else [] for p, ok in zip(placed, has_vector)]


def _token_label(backend: Backend, token: int) -> str:
    return repr(backend.decode([token])) if token not in backend.eos_token_ids else "<eos>"


def _first_token_counts(backend: Backend, first_tokens: list[int]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for token in first_tokens:
        key = _token_label(backend, token)
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))


def _entropy_by_position(traces: list[Trace]) -> list[float]:
    longest = max((len(tr.steps) for tr in traces), default=0)
    means = []
    for position in range(longest):
        values = [tr.steps[position].entropy for tr in traces if len(tr.steps) > position]
        means.append(round(float(np.mean(values)), 4))
    return means


def _bifurcations(
    backend: Backend, traces: list[Trace], margin: float = SamplingSettings.bifurcation_margin
) -> list[Bifurcation]:
    found = metrics.bifurcations([tr.steps for tr in traces], margin=margin)
    return [
        Bifurcation(
            position=b.position,
            context=backend.decode(list(b.prefix)[-12:]),
            candidates=[backend.decode([t]) for t in b.candidates],
            margin=round(b.margin, 4),
        )
        for b in found
    ]
