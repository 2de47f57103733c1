"""``run --repair``: sample each candidate with the original's seeds, compare, judge.

1. :func:`diagnose.repair.candidates.propose` lists the candidates, most severe first.
2. The candidates that fit the remaining budget (in samples) are decoded together: one
   multi-prompt batch (:mod:`diagnose.decode.multi_prompt`) holds every candidate's
   rows (the original seeds at its temperatures); the prompts share most of their tokens,
   prefilled once as the batch's root, and each row gives what its candidate decoded
   alone gives, each with its own sampling settings (a server samples candidate after
   candidate). Each candidate's
   samples are measured against the *original* case's centers, so ``center_pull`` and
   ``center_split`` stay comparable. A candidate that does not fit
   is listed as skipped, with what it would have cost; later, cheaper ones still run.
3. Triage is re-run on each candidate (its case, its input report restricted from the
   original's, its sampling) to see whether the findings it answers still fire.
4. Every metric of every sampled candidate is one test (pooled over temperatures):
   the Bonferroni family. :mod:`diagnose.repair.verdict` turns the corrected tests and
   the re-run triage into a verdict; the repairs are sorted best first.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import msgspec

from diagnose.case import Case
from diagnose.analysis import InputAnalysis
from diagnose.embedding import Embedder
from diagnose.progress import Progress
from diagnose.prompt import build_messages
from diagnose.report import (
    SEVERITY_RANK, Finding, Repair, RepairAnswer, RepairOverview, RepairRun, RepairTest, SamplingReport,
    SkippedRepair, TemperatureRun,
)  # fmt: skip
from diagnose.repair import annotate
from diagnose.repair.candidates import Candidate, propose
from diagnose.repair.case_text import case_diff
from diagnose.sampling.paired_measures import METRICS, Side
from diagnose.repair.scope import candidate_inputs
from diagnose.sampling.paired_tests import SignificanceSettings, compare
from diagnose.stats import bonferroni
from diagnose.repair.verdict import VERDICT_RANK, outcome, verdict
from diagnose.sampling.constraints import ConstraintChecker
from diagnose.decode.engine import Trace, rows_for
from diagnose.decode.multi_prompt import PromptRows, decode_prompts
from diagnose.sampling.settings import SamplingSettings
from diagnose.sampling.stage import measure_run, sample_traces
from diagnose.triage import TriageContext, TriageThresholds, triage

if TYPE_CHECKING:
    from diagnose.decode.backend import PromptCounter

BUDGET_FACTOR = 4
"""The default budget: this many times the case's samples (seeds x temperatures)."""
BATCHING = ("the candidates in one multi-prompt batch (their common prompt prefix prefilled once; "
            "each row as its candidate decoded alone)")
REMOVAL_NOTE = (
    "Removing documents hides a conflict rather than resolving it, unless the removed documents "
    "are wrong: check that the answer below is the right one before dropping them from retrieval."
)


@dataclass(frozen=True)
class RepairOutcome:
    repairs: list[Repair]
    skipped: list[SkippedRepair]
    overview: RepairOverview
    findings: list[Finding]
    """The original findings, each answered one noting its repairs (``annotate_findings``)."""


@dataclass
class _Sampled:
    candidate: Candidate
    sampling: SamplingReport
    traces: dict[float, list[Trace]]
    runs: dict[float, TemperatureRun]
    prompt_tokens: int
    samples: int
    seconds: float
    findings: list[Finding] = field(default_factory=list)


def default_budget(case: Case) -> int:
    return BUDGET_FACTOR * case.sampling.seeds * len(case.sampling.temperatures)


def run_repairs(
    case: Case,
    analysis: InputAnalysis,
    sampling: SamplingReport,
    traces: Sequence[Trace],
    findings: Sequence[Finding],
    *,
    backend,
    embedder: Embedder,
    counter: PromptCounter,
    thresholds: TriageThresholds,
    environment: dict,
    budget: int | None = None,
    seed_offset: int = 0,
    progress: Progress | None = None,
    settings: SignificanceSettings = SignificanceSettings(),
    sampling_settings: SamplingSettings = SamplingSettings(),
) -> RepairOutcome:
    """Propose, sample, compare and judge every candidate repair of ``case`` (see the module docstring).

    ``sampling``/``traces``/``findings`` are the original run's; ``budget`` is in samples
    (None: :func:`default_budget`); ``seed_offset`` and ``sampling_settings`` (the
    measurements' thresholds, ``SignificanceSettings.sampling``) must be the original run's."""
    if budget is not None and budget < 0:
        raise ValueError(f"repair budget must be >= 0 samples, got {budget}")
    started = time.perf_counter()
    allowed = default_budget(case) if budget is None else budget
    original_runs = {r.temperature: r for r in sampling.runs}
    original_traces = _by_temperature(traces)
    candidates = propose(case, analysis.report, sampling, findings, thresholds)
    chosen: list[tuple[Candidate, list[float]]] = []
    skipped: list[SkippedRepair] = []
    spent = 0
    for candidate in candidates:
        temps = candidate.sampled_temperatures(case.sampling.temperatures)
        cost = case.sampling.seeds * len(temps)
        if cost > allowed - spent:
            skipped.append(SkippedRepair(
                id=candidate.id, change=candidate.change, diff=case_diff(case, candidate.case, candidate.id),
                answers=list(candidate.answers), samples=cost,
                reason=f"needs {cost} samples; {allowed - spent} of the budget of {allowed} left"))
            continue
        chosen.append((candidate, temps))
        spent += cost
    decoded = _decode(chosen, backend, counter, seed_offset, progress)
    sampled: list[_Sampled] = []
    for index, ((candidate, temps), (prompt_ids, traces, seconds)) in enumerate(zip(chosen, decoded), 1):
        if progress is not None:
            progress.phase(f"repair {index}/{len(chosen)} {candidate.id}: measuring")
        done = _measure(candidate, temps, case, analysis, backend, embedder, prompt_ids, traces, seconds, thresholds,
                        sampling_settings, original_runs, original_traces)
        done.findings = triage(TriageContext(
            case=candidate.case,
            inputs=candidate_inputs(analysis.report, candidate.case, counter.count_tokens, done.prompt_tokens,
                                    thresholds),
            sampling=done.sampling, environment=environment, thresholds=thresholds,
            sampling_settings=sampling_settings))
        sampled.append(done)
    family = sum(len(s.candidate.metrics) for s in sampled)
    if progress is not None and sampled:
        progress.phase(f"repair verdicts ({family} tests)")
    labels = {c.id: c.label for c in analysis.report.gravity_centers}
    repairs = [_judge(s, case, findings, original_runs, original_traces, family, settings, labels) for s in sampled]
    order = {s.candidate.id: i for i, s in enumerate(sampled)}
    repairs.sort(key=lambda r: ("drops_authoritative" in r.change, VERDICT_RANK[r.verdict], _lead_p(r), order[r.id]))
    best = repairs[0].id if repairs and repairs[0].verdict in annotate.VERIFIED else None
    overview = RepairOverview(
        budget=allowed, default_budget=default_budget(case), spent=spent, tests=family, alpha=settings.alpha,
        best=best, headline=annotate.headline(repairs, skipped), batching=BATCHING,
        wall_seconds=round(time.perf_counter() - started, 3),
    )
    return RepairOutcome(repairs, skipped, overview, annotate.annotate_findings(findings, repairs))


def _decode(chosen: list[tuple[Candidate, list[float]]], backend, counter: PromptCounter, seed_offset: int,
            progress: Progress | None) -> list[tuple[list[int], dict[float, list[Trace]], float]]:
    """Each chosen candidate's prompt ids, traces by temperature and decoding seconds. In-process,
    every candidate decodes in one multi-prompt batch (each with its own sampling settings), the
    batch's seconds shared by the candidates in proportion to their rows; a server samples
    candidate after candidate."""
    prompts = [counter.chat_ids(build_messages(c.case)) for c, _ in chosen]
    specs = [msgspec.structs.replace(c.case.sampling, temperatures=temps) for c, temps in chosen]
    rows = [rows_for(spec, seed_offset) if spec.temperatures else [] for spec in specs]
    out: list[tuple[list[int], dict[float, list[Trace]], float]] = [(p, {}, 0.0) for p in prompts]
    batch = [i for i in range(len(chosen)) if rows[i]]
    if not backend.in_process:  # a server: one candidate at a time, as it samples row by row
        for i in batch:
            _progress(progress, f"repair {chosen[i][0].id}: sampling {len(rows[i])} rows", len(rows[i]))
            started = time.perf_counter()
            traces = sample_traces(chosen[i][0].case, backend, prompts[i], rows[i], _on_step(progress))
            out[i] = (prompts[i], _by_temperature(traces), time.perf_counter() - started)
        return out
    if not batch:
        return out
    total = sum(len(rows[i]) for i in batch)
    names = ", ".join(chosen[i][0].id for i in batch)
    _progress(progress, f"repair sampling: {total} rows of {len(batch)} candidates in one batch ({names})",
              max(specs[i].max_new_tokens for i in batch))
    started = time.perf_counter()
    decoded = decode_prompts(backend, [PromptRows(prompts[i], rows[i], specs[i]) for i in batch], specs[batch[0]],
                             _on_step(progress))
    seconds = time.perf_counter() - started
    for i, traces in zip(batch, decoded):
        out[i] = (prompts[i], _by_temperature(traces), seconds * len(rows[i]) / total)
    return out


def _progress(progress: Progress | None, description: str, total: int) -> None:
    if progress is not None:
        progress.phase(description, total=total)


def _on_step(progress: Progress | None):
    return (lambda position, live: progress.update(position)) if progress is not None else None


def _measure(candidate: Candidate, temps: list[float], case: Case, analysis: InputAnalysis, backend,
             embedder: Embedder, prompt_ids: list[int], decoded: dict[float, list[Trace]], seconds: float,
             thresholds: TriageThresholds, sampling_settings: SamplingSettings,
             original_runs: dict[float, TemperatureRun], original_traces: dict[float, list[Trace]]) -> _Sampled:
    """The candidate's runs at ``temps`` from its decoded traces; the original's runs at its other
    temperatures (only a ``temperature`` change has any)."""
    started = time.perf_counter()
    runs = {t: original_runs[t] for t in candidate.case.sampling.temperatures if t not in temps}
    traces = {t: original_traces.get(t, []) for t in runs}
    if temps:
        checker = ConstraintChecker(case.constraints, sampling_settings.regex_timeout_s,
                                    sampling_settings.regex_budget_s)
        for t in temps:
            # Measured against the original case's centers and documents, so the pull is comparable.
            runs[t] = measure_run(case, backend, decoded[t], embedder, analysis, checker, sampling_settings)
            traces[t] = decoded[t]
    ordered = [runs[t] for t in candidate.case.sampling.temperatures]
    seconds += time.perf_counter() - started
    report = SamplingReport(runs=ordered, backend=getattr(backend, "name", "transformers"),
                            wall_seconds=round(seconds, 3))
    return _Sampled(candidate, report, traces, runs, len(prompt_ids), case.sampling.seeds * len(temps), seconds)


def _judge(done: _Sampled, case: Case, findings: Sequence[Finding], original_runs: dict[float, TemperatureRun],
           original_traces: dict[float, list[Trace]], family: int, settings: SignificanceSettings,
           labels: dict[str, str]) -> Repair:
    candidate = done.candidate
    compared = candidate.compared_temperatures(case.sampling.temperatures)
    before = {t: Side(original_runs[t], original_traces.get(t, [])) for t, _ in compared}
    after = {t: Side(done.runs[t2], done.traces.get(t2, [])) for t, t2 in compared}
    tests: list[RepairTest] = []
    per_run: dict[float, dict[str, float]] = {t: {} for t, _ in compared}
    for name in candidate.metrics:
        metric = METRICS[name]
        pooled = compare(metric, [(before[t], after[t]) for t, _ in compared], settings)
        if pooled is None:
            continue
        p_adjusted = bonferroni(pooled.p, family)
        tests.append(RepairTest(
            metric=name, role="target" if name in candidate.targets else "guard", test=metric.test,
            before=round(pooled.before, 6), after=round(pooled.after, 6), diff=round(pooled.diff, 6),
            p=_round_p(pooled.p), p_adjusted=_round_p(p_adjusted), min_change=metric.min_change,
            outcome=outcome(metric, pooled.diff, p_adjusted, settings.alpha)))
        for t, _ in compared:
            single = pooled if len(compared) == 1 else compare(metric, [(before[t], after[t])], settings)
            per_run[t][name] = _round_p(single.p) if single is not None else 1.0
    runs = [
        RepairRun(temperature=t, after_temperature=t2,
                  before={m: _value(METRICS[m].value([before[t]])) for m in candidate.metrics},
                  after={m: _value(METRICS[m].value([after[t]])) for m in candidate.metrics},
                  p=per_run[t])
        for t, t2 in compared
    ]
    original_severity = {f.rule: SEVERITY_RANK[f.severity] for f in findings}
    now = {}
    for f in done.findings:
        now[f.rule] = max(now.get(f.rule, -1), SEVERITY_RANK[f.severity])
    still = [r for r in candidate.rechecked if now.get(r, -1) >= original_severity.get(r, 0)]
    resolved = bool(candidate.rechecked) and not still
    judged = verdict(tests, resolved)
    temperatures = [t2 for _, t2 in compared]
    return Repair(
        id=candidate.id, change=candidate.change, diff=case_diff(case, candidate.case, candidate.id),
        verdict=judged, runs=runs, answers=list(candidate.answers), resolved=resolved,
        new_findings=[r for r in dict.fromkeys(f.rule for f in done.findings)
                      if r not in original_severity and not r.startswith("environment.")],
        tests=tests, samples=done.samples, wall_seconds=round(done.seconds, 3),
        answer=_answer(done, labels) if candidate.removes_documents else None,
        note=REMOVAL_NOTE if candidate.removes_documents else None,
        summary=annotate.summary_line(judged, tests, temperatures),
    )


def _answer(done: _Sampled, labels: dict[str, str]) -> RepairAnswer | None:
    """The candidate's dominant answer: its largest meaning cluster (first sample as the text)
    and the center most of its samples follow."""
    runs = [done.runs[t] for t in done.candidate.case.sampling.temperatures if done.runs[t].samples]
    if not runs:
        return None
    clusters = [(run, cluster, count) for run in runs for cluster, count in
                Counter(s.cluster for s in run.samples).items()]
    run, cluster, count = max(clusters, key=lambda x: (x[2] / x[0].n, -x[0].temperature))
    followed = Counter(s.center for r in runs for s in r.samples)
    center, n = max(followed.items(), key=lambda kv: (kv[1], kv[0] != "none"))
    return RepairAnswer(
        text=next(s.text for s in run.samples if s.cluster == cluster), share=round(count / run.n, 4),
        center=center, label=labels.get(center, ""), center_share=round(n / sum(followed.values()), 4))


def _by_temperature(traces: Sequence[Trace]) -> dict[float, list[Trace]]:
    out: dict[float, list[Trace]] = {}
    for trace in traces:
        out.setdefault(trace.row.temperature, []).append(trace)
    return out


def _lead_p(repair: Repair) -> float:
    test = annotate.lead_test(repair.tests)
    return test.p_adjusted if test is not None else 1.0


def _value(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def _round_p(p: float) -> float:
    return float(f"{p:.4g}")
