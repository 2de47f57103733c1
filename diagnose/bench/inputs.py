"""Benchmark the input stage over a folder of cases: reports, score, throughput.

Three timed passes over the same cases:

1. **raw encoder** — the bare model's ``encode`` over every document and
   question text of the cases in one batched call (no cache, no analysis):
   the baseline;
2. **cold stage** — the full input stage with an empty embedding cache (a
   fresh temporary directory): all cases' texts are embedded up front in one
   batched call through the :class:`~diagnose.embedding.CachedEmbedder`,
   then each case is analysed (its embeddings now hit the cache);
3. **warm stage** — the same again with a new embedder on the same cache
   directory: nothing is re-embedded (``warm_embedded=0``).

``ratio`` is ``stage_s / raw_encoder_s`` (1.0: the stage costs what the
encoder alone costs). Report writing and scoring are outside the timings.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import msgspec

from diagnose.case import Case
from diagnose.case_file import load_case
from diagnose.inputs.claims import document_sentences
from diagnose.inputs.settings import InputSettings
from diagnose.analysis import InputAnalysis
from diagnose.inputs.stage import analyze_inputs
from diagnose.report import write_atomic
from diagnose.text.questions import is_yes_no_question

if TYPE_CHECKING:
    from diagnose.embedding import CachedEmbedder, Embedder
    from diagnose.inputs.reading import DocumentReader

#: The RAMDocs scorer shipped beside the project (run as a subprocess when present).
DEFAULT_SCORER = Path(__file__).resolve().parents[3] / "shared" / "eval" / "score_ramdocs.py"
_ROOT = Path(__file__).resolve().parents[2]


@dataclass
class InputsBenchResult:
    cases: int
    docs: int
    texts: int
    """Document and question texts (the raw encoder's input)."""
    stage_s: float
    """Cold input stage over all cases: batched embedding + per-case analysis."""
    embed_s: float
    """The batched embedding part of ``stage_s``."""
    raw_encoder_s: float
    warm_s: float
    cold_embedded: int
    """Distinct texts the cold run sent to the model."""
    warm_embedded: int
    """Texts the warm run sent to the model (0 when the cache works)."""
    reports: list[Path]
    score_line: str | None = None
    score_output: str = ""
    pull_self: float = float("nan")
    """Share of centered documents whose own best claim the center-pull attribution gives to their center."""
    read: tuple[int, float, float] | None = None
    """Read tier: documents read, prefill seconds, decode seconds (None: static tier)."""
    peak_rss_mb: float = 0.0
    """The process's peak resident memory after the read pass (models, reader and stage)."""
    prefix_speedup: tuple[float, float] | None = None
    """Reference reader: seconds to read one case's documents each from an empty cache, and
    sharing their prompts' head (the prompt tree's root), measured back to back."""

    @property
    def ratio(self) -> float:
        return self.stage_s / self.raw_encoder_s if self.raw_encoder_s > 0 else float("inf")

    @property
    def cases_per_s(self) -> float:
        return self.cases / self.stage_s if self.stage_s > 0 else float("inf")

    def lines(self) -> list[str]:
        """Printable summary; the last line is machine-readable (``INPUTS ...``)."""
        out = [
            f"raw encoder   {self.texts} texts in {self.raw_encoder_s:.2f}s",
            f"cold stage    {self.stage_s:.2f}s (embed {self.embed_s:.2f}s of {self.cold_embedded} distinct texts, "
            f"analysis {self.stage_s - self.embed_s:.2f}s)",
            f"warm stage    {self.warm_s:.2f}s ({self.warm_embedded} texts re-embedded)",
        ]
        if self.reports:
            out.append(f"reports       {len(self.reports)} in {self.reports[0].parent}")
        if self.score_line:
            out.append(self.score_line)
        out.append(f"PULL self_attribution={self.pull_self:.4f}")
        if self.read is not None:
            docs, prefill, decode = self.read
            per = max(docs, 1)
            line = (f"READ docs={docs} prefill_s_per_doc={prefill / per:.4f} decode_s_per_doc={decode / per:.4f} "
                    f"read_s_per_doc={(prefill + decode) / per:.4f} peak_rss_mb={self.peak_rss_mb:.0f}")
            if self.prefix_speedup is not None:
                alone, shared = self.prefix_speedup
                line += f" one_at_a_time_s={alone:.2f} shared_head_s={shared:.2f} speedup={alone / max(shared, 1e-9):.2f}"
            out.append(line)
        out.append(
            f"INPUTS cases={self.cases} docs={self.docs} stage_s={self.stage_s:.3f} "
            f"raw_encoder_s={self.raw_encoder_s:.3f} ratio={self.ratio:.3f} warm_s={self.warm_s:.3f} "
            f"cases_per_s={self.cases_per_s:.2f}"
        )
        return out


def load_cases(case_paths: list[Path]) -> list[Case]:
    """Parse contract case files (YAML or JSON, as ``diagnose run`` reads them), in the given order."""
    return [load_case(p) for p in case_paths]


def case_texts(case: Case, settings: InputSettings) -> list[str]:
    """The texts the input stage embeds for ``case``: its documents' sentences, then its question."""
    return document_sentences(
        case.question, [d.text for d in case.documents], settings.max_sentences, settings.max_sentence_chars
    ).flat + [case.question]


def raw_texts(case: Case) -> list[str]:
    """What a plain embedding tool would encode: the documents, then the question."""
    return [d.text for d in case.documents] + [case.question]


def analyze(case: Case, embedder: "Embedder", settings: InputSettings, reader: "DocumentReader | None" = None) -> InputAnalysis:
    """The input stage alone on one case (no tokenizer, no prompt layout)."""
    return analyze_inputs(case, embedder, settings, reader=reader)


def pull_self_check(cases: list[Case], analyses: list[InputAnalysis], embedder: "Embedder") -> float:
    """Share of centered documents whose own best claim, attributed as if it were
    a sampled output, goes to the document's own center (nan with none)."""
    from diagnose.sampling.pull import attribute_samples

    hits = total = 0
    for case, analysis in zip(cases, analyses):
        views = analysis.report.documents
        claims = [(k, v.claim) for k, v in enumerate(views) if v.center is not None and v.claim]
        if not claims:
            continue
        index = {d.id: k for k, d in enumerate(case.documents)}
        center_docs = {c.id: [index[d] for d in c.documents] for c in analysis.report.gravity_centers}
        got = attribute_samples(
            [c for _, c in claims], embedder.encode([c for _, c in claims]), center_docs,
            analysis.center_answers, analysis.doc_embeddings, claim_embeddings=analysis.claim_embeddings,
        )
        hits += sum(g == views[k].center for (k, _), g in zip(claims, got))
        total += len(claims)
    return hits / total if total else float("nan")


def report_dict(case: Case, analysis: InputAnalysis) -> dict[str, Any]:
    """The contract report of an input-stage-only run."""
    return {
        "case_id": case.id,
        "verdict": "ok",
        "input": msgspec.to_builtins(analysis.report),
        "findings": [],
        "environment": {},
    }


def run_stage(
    cases: list[Case], embedder: "CachedEmbedder", settings: InputSettings, reader: "DocumentReader | None" = None
) -> tuple[list[InputAnalysis], float]:
    """Embed all cases' texts in one batched call, then analyse each case.

    Returns the analyses and the seconds the batched embedding took."""
    started = time.perf_counter()
    embedder.encode([t for c in cases for t in case_texts(c, settings)])
    embed_s = time.perf_counter() - started
    return [analyze(c, embedder, settings, reader) for c in cases], embed_s


def run_inputs_bench(
    case_paths: list[Path],
    out_dir: Path | None,
    embedder_factory: Callable[[Path], "CachedEmbedder"],
    settings: InputSettings,
    truth: Path | None = None,
    on_case: Callable[[str, dict[str, Any]], None] | None = None,
    scorer: Path | None = DEFAULT_SCORER,
    reader: "DocumentReader | None" = None,
) -> InputsBenchResult:
    """Benchmark the input stage (see the module docstring).

    ``embedder_factory(cache_dir)`` returns a fresh CachedEmbedder caching
    under ``cache_dir``. Reports go to ``out_dir/<case_id>.json`` (a temporary
    folder when ``out_dir`` is None and ``truth`` is given, else none are
    written). With ``truth`` and an existing ``scorer`` script, the reports are
    scored in a subprocess and its ``SCORE`` line kept. ``on_case(case_id,
    report)`` is called after each report is built. With ``reader`` the cold
    pass is the read tier (the warm pass stays static: it measures the cache)
    and the reader's cost per document is kept.
    """
    cases = load_cases(case_paths)
    texts = [t for c in cases for t in raw_texts(c)]
    with tempfile.TemporaryDirectory(prefix="diagnose-bench-") as tmp:
        cache = Path(tmp) / "cache"
        cold = embedder_factory(cache)
        model = cold.model
        _encode_raw(model, ["warm up the encoder"], cold.batch_size)  # first-call set-up, for neither pass
        started = time.perf_counter()
        _encode_raw(model, texts, cold.batch_size)
        raw_s = time.perf_counter() - started

        read_before = _reading_totals(reader)
        started = time.perf_counter()
        analyses, embed_s = run_stage(cases, cold, settings, reader)
        stage_s = time.perf_counter() - started
        read_after = _reading_totals(reader)
        peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        speedup = prefix_speedup(reader, cases[0]) if reader is not None and cases else None

        warm = embedder_factory(cache)
        started = time.perf_counter()
        run_stage(cases, warm, settings)
        warm_s = time.perf_counter() - started

        written: list[Path] = []
        target = out_dir if out_dir is not None else (Path(tmp) / "reports" if truth else None)
        for case, analysis in zip(cases, analyses):
            report = report_dict(case, analysis)
            if target is not None:
                path = Path(target) / f"{case.id}.json"
                write_atomic(path, json.dumps(report, ensure_ascii=False, indent=1))
                written.append(path)
            if on_case is not None:
                on_case(case.id, report)
        score_line, score_output = None, ""
        if truth is not None and target is not None and scorer is not None and Path(scorer).is_file():
            score_line, score_output = score_reports(Path(scorer), Path(truth), Path(target))
        return InputsBenchResult(
            cases=len(cases),
            docs=sum(len(c.documents) for c in cases),
            texts=len(texts),
            stage_s=stage_s,
            embed_s=embed_s,
            raw_encoder_s=raw_s,
            warm_s=warm_s,
            cold_embedded=cold.embedded,
            warm_embedded=warm.embedded,
            reports=written if out_dir is not None else [],
            score_line=score_line,
            score_output=score_output,
            pull_self=pull_self_check(cases, analyses, cold),
            read=tuple(b - a for a, b in zip(read_before, read_after)) if reader is not None else None,
            peak_rss_mb=peak_rss_mb,
            prefix_speedup=speedup,
        )


def score_reports(scorer: Path, truth: Path, report_dir: Path) -> tuple[str | None, str]:
    """Run ``scorer TRUTH REPORTDIR`` from the project root; its last ``SCORE`` line and output."""
    proc = subprocess.run(
        [sys.executable, str(scorer), str(truth), str(report_dir)],
        cwd=_ROOT, capture_output=True, text=True, check=False,
    )
    output = proc.stdout + proc.stderr
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("SCORE ")]
    return (lines[-1] if lines else None), output


def _encode_raw(model: Any, texts: list[str], batch_size: int) -> None:
    model.encode(texts, batch_size=batch_size, convert_to_numpy=True, show_progress_bar=False)


def prefix_speedup(reader: Any, case: Case, documents: int = 4) -> tuple[float, float] | None:
    """(seconds reading ``case``'s first documents each from an empty key/value cache, seconds
    reading them in one pass that shares the prompts' head), for a reader whose engine can
    do both (the reference reader); None for others. The same replies either way."""
    engine = getattr(reader, "engine", None)
    if engine is None or not hasattr(engine, "reuse_prefix"):
        return None
    texts = [d.text for d in case.documents if d.text.strip()][:documents]
    yes_no = is_yes_no_question(case.question)
    timings = []
    for reuse in (False, True):
        engine.reuse_prefix = reuse
        engine.forget()
        started = time.perf_counter()
        reader.read(case.question, texts, yes_no)
        timings.append(time.perf_counter() - started)
    engine.reuse_prefix = True
    return timings[0], timings[1]


def _reading_totals(reader: "DocumentReader | None") -> tuple[int, float, float]:
    if reader is None:
        return (0, 0.0, 0.0)
    stats = reader.stats
    return (stats.documents, stats.prefill_s, stats.decode_s)
