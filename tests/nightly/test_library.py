"""Prompt-library discovery: order, content hash, tag filter, duplicate ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from diagnose.errors import CaseError, UsageError
from diagnose.nightly.library import content_hash, discover

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = ROOT / "fixtures" / "library"
CHANGED = ROOT / "fixtures" / "library-changed"

CASE = {
    "id": "alpha",
    "question": "What year?",
    "documents": [{"id": "d1", "text": "It happened in 1999."}],
    "tags": ["smoke", "clean"],
    "sampling": {"seeds": 2, "temperatures": [0.7], "max_new_tokens": 8},
}


def write(path: Path, data: dict, fmt: str = "yaml") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data) if fmt == "json" else yaml.safe_dump(data, sort_keys=False)
    path.write_text(text, encoding="utf-8")
    return path


def test_fixture_library_has_ten_varied_cases_sorted_by_path() -> None:
    cases = discover(LIBRARY)
    assert len(cases) >= 10
    relative = [c.relative_path for c in cases]
    assert relative == sorted(relative)
    assert len({c.case_id for c in cases}) == len(cases)
    tags = {t for c in cases for t in c.case.tags}
    assert {"smoke", "clean", "conflict"} <= tags
    assert any(p.endswith(".json") for p in relative) and any(p.endswith(".yaml") for p in relative)
    for c in cases:  # kept cheap on CPU
        assert c.case.sampling.seeds <= 8 and c.case.sampling.max_new_tokens <= 24


def test_changed_library_differs_in_exactly_two_cases() -> None:
    base = {c.case_id: c for c in discover(LIBRARY)}
    changed = {c.case_id: c for c in discover(CHANGED)}
    assert base.keys() == changed.keys()
    differing = sorted(k for k in base if base[k].content_hash != changed[k].content_hash)
    assert differing == ["canberra-capital", "eiffel-tower-opening"]
    assert len(changed["eiffel-tower-opening"].case.documents) == len(base["eiffel-tower-opening"].case.documents) + 1
    assert changed["canberra-capital"].case.sampling.max_new_tokens == 4


def test_hash_ignores_formatting_but_not_content(tmp_path: Path) -> None:
    a = discover(write(tmp_path / "a" / "case.yaml", CASE))[0]
    reordered = dict(reversed(list(CASE.items())))
    b = discover(write(tmp_path / "b" / "case.json", reordered, "json"))[0]
    defaults = {**CASE, "model": "default", "constraints": []}  # explicit defaults: same case
    c = discover(write(tmp_path / "c" / "case.yml", defaults))[0]
    assert a.content_hash == b.content_hash == c.content_hash
    assert a.content_hash.startswith("sha256:") and len(a.content_hash) == 7 + 64
    edited = {**CASE, "documents": [{"id": "d1", "text": "It happened in 2001."}]}
    assert discover(write(tmp_path / "d" / "case.yaml", edited))[0].content_hash != a.content_hash
    retagged = {**CASE, "tags": ["other"]}  # tags select cases; they do not change the diagnosis
    assert discover(write(tmp_path / "e" / "case.yaml", retagged))[0].content_hash == a.content_hash
    assert content_hash(a.case) == a.content_hash


def test_recursive_sorted_and_ignores_other_files(tmp_path: Path) -> None:
    write(tmp_path / "z" / "one.yaml", {**CASE, "id": "one"})
    write(tmp_path / "a" / "b" / "two.json", {**CASE, "id": "two"}, "json")
    write(tmp_path / "m.yml", {**CASE, "id": "three"})
    (tmp_path / "notes.md").write_text("# not a case\n")
    write(tmp_path / ".hidden" / "x.yaml", {**CASE, "id": "hidden"})
    cases = discover(tmp_path)
    assert [c.relative_path for c in cases] == ["a/b/two.json", "m.yml", "z/one.yaml"]
    assert [c.case_id for c in cases] == ["two", "three", "one"]


def test_tag_filter_needs_every_tag(tmp_path: Path) -> None:
    write(tmp_path / "a.yaml", {**CASE, "id": "a", "tags": ["smoke", "clean"]})
    write(tmp_path / "b.yaml", {**CASE, "id": "b", "tags": ["smoke"]})
    write(tmp_path / "c.yaml", {**CASE, "id": "c", "tags": []})
    assert [c.case_id for c in discover(tmp_path, ["smoke"])] == ["a", "b"]
    assert [c.case_id for c in discover(tmp_path, ["smoke", "clean"])] == ["a"]
    assert discover(tmp_path, ["nope"]) == []
    assert len(discover(tmp_path)) == 3


def test_duplicate_case_id_names_both_files(tmp_path: Path) -> None:
    write(tmp_path / "x" / "first.yaml", CASE)
    write(tmp_path / "y" / "second.json", CASE, "json")
    with pytest.raises(CaseError) as info:
        discover(tmp_path)
    assert "x/first.yaml" in str(info.value) and "y/second.json" in str(info.value)
    assert "alpha" in str(info.value)


def test_duplicate_ids_are_found_even_when_tags_filter_one_out(tmp_path: Path) -> None:
    write(tmp_path / "a.yaml", {**CASE, "tags": ["smoke"]})
    write(tmp_path / "b.yaml", {**CASE, "tags": []})
    with pytest.raises(CaseError):
        discover(tmp_path, ["smoke"])


def test_invalid_case_names_its_file_and_field(tmp_path: Path) -> None:
    write(tmp_path / "ok.yaml", CASE)
    write(tmp_path / "bad.yaml", {**CASE, "id": "bad", "sampling": {"top_p": 1.5}})
    with pytest.raises(CaseError) as info:
        discover(tmp_path)
    assert info.value.field == "bad.yaml: sampling.top_p"


def test_missing_root_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        discover(tmp_path / "nowhere")


def test_a_single_file_is_a_one_case_library(tmp_path: Path) -> None:
    cases = discover(write(tmp_path / "case.yaml", CASE))
    assert [c.case_id for c in cases] == ["alpha"]
    assert cases[0].relative_path == "case.yaml"
