"""A prompt library: every case file under a folder, with a content hash per case.

The hash is the SHA-256 of the validated case's canonical JSON (msgspec, sorted
keys, defaults filled in, ``tags`` left out), so reformatting a file, reordering
its keys, switching YAML for JSON or retagging a case does not change it, while
any change to what is diagnosed (a document, a sampling setting, a constraint) does.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import msgspec

from diagnose.case import Case
from diagnose.case_file import load_case
from diagnose.errors import CaseError, UsageError

CASE_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(frozen=True)
class LibraryCase:
    """One case of the library: where it came from, the case, and its content hash."""

    path: Path
    """The case file (as found under the library root)."""
    case: Case
    content_hash: str
    """``sha256:<hex>`` of the canonical JSON of the validated case."""
    relative_path: str = ""
    """``path`` relative to the library root, with forward slashes."""

    @property
    def case_id(self) -> str:
        return self.case.id


def content_hash(case: Case) -> str:
    """SHA-256 of the case's canonical JSON (sorted keys, defaults included, tags left out)."""
    data = msgspec.to_builtins(case)
    data.pop("tags", None)  # labels for selecting cases; they do not change the diagnosis
    canonical = msgspec.json.encode(data, order="sorted")
    return "sha256:" + hashlib.sha256(canonical).hexdigest()


def discover(root: Path, tags: Sequence[str] = ()) -> list[LibraryCase]:
    """Every .yaml/.yml/.json case under ``root`` (recursively), sorted by relative path.

    With ``tags``, only cases carrying every one of them are kept. A single case
    file may be given as ``root``. Raises :class:`UsageError` for a missing root and
    :class:`CaseError` for an invalid case (prefixed with its file) or a case id
    used by two files (both named).
    """
    root = Path(root)
    if root.is_file():
        files = [root]
        base = root.parent
    elif root.is_dir():
        files = sorted(
            (p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in CASE_SUFFIXES
             and not any(part.startswith(".") for part in p.relative_to(root).parts)),
            key=lambda p: p.relative_to(root).as_posix(),
        )
        base = root
    else:
        raise UsageError(f"library not found: {root}")
    found: list[LibraryCase] = []
    seen: dict[str, Path] = {}
    for file in files:
        relative = file.relative_to(base).as_posix()
        try:
            case = load_case(file)
        except CaseError as exc:
            raise CaseError(f"{relative}: {exc.field}", exc.reason, exc.value) from None
        if case.id in seen:
            raise CaseError(
                "id", f"case id is used by both {seen[case.id]} and {relative}", case.id
            )
        seen[case.id] = Path(relative)
        found.append(LibraryCase(file, case, content_hash(case), relative))
    wanted = set(tags)
    return [c for c in found if wanted.issubset(c.case.tags)]
