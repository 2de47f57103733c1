"""The dev cases the measurement scripts draw from (``scripts/repair-rates``, ``scripts/verdict-rates``).

Not part of the package: the scripts put this folder on ``sys.path``.
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: What each fixture is built to show: documents that conflict, or not.
FIXTURE_CONFLICT = {
    "ambiguous-entity": True, "chinese-language": True, "contradicting-years": True,
    "clean-single-answer": False, "json-format": False, "off-topic-document": False,
    "sampling-settings-trap": False,
}


def data_dir() -> Path:
    """``shared/data`` beside the checkout, or beside the folder holding it (a worktree under ``wt/``)."""
    for base in (ROOT.parent, ROOT.parent.parent):
        if (base / "shared" / "data").is_dir():
            return base / "shared" / "data"
    return ROOT.parent / "shared" / "data"


def fixture_cases() -> list[tuple[Path, bool]]:
    return [(p, FIXTURE_CONFLICT[p.stem]) for p in sorted((ROOT / "fixtures/cases").glob("*.yaml"))]


def dev_cases(name: str, conflicts: int, clean: int, max_documents: int = 8) -> list[tuple[Path, bool]]:
    """The first ``conflicts`` conflict cases and the first ``clean`` clean cases of dev set ``name``
    (by file name; the truth's ``conflict``; at most ``max_documents`` documents)."""
    from diagnose.case_file import load_case

    folder = data_dir() / name
    truth = {}
    for line in (folder / "truth.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            truth[row["case_id"]] = bool(row["conflict"])
    wanted = {True: conflicts, False: clean}
    picked: dict[bool, list[Path]] = {True: [], False: []}
    for path in sorted(p for p in (folder / "cases").iterdir() if p.suffix in (".json", ".yaml", ".yml")):
        case = load_case(path)
        conflict = truth.get(case.id)
        if conflict is None or len(picked[conflict]) >= wanted[conflict] or len(case.documents) > max_documents:
            continue
        picked[conflict].append(path)
    return [(p, True) for p in picked[True]] + [(p, False) for p in picked[False]]
