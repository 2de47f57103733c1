"""Reading a stored report back: what the current code writes comes back exactly; older reports load."""

from __future__ import annotations

import json

import msgspec
import pytest

from diagnose.pipeline import Diagnoser
from diagnose.report import Report, read_report
from diagnose.settings import Settings
from tests.repair.fakes import bridge_case
from tests.repair.test_pipeline import FakeRegistry


@pytest.fixture(scope="module")
def reports() -> dict[str, Report]:
    """An inputs-only report, a run with its control, and a run with repairs, on the fake model."""
    case = bridge_case("1937", "1952", seeds=4)
    diagnoser = Diagnoser(Settings(), FakeRegistry())
    return {"inputs": diagnoser.inputs(case), "run": diagnoser.run(case, read=False),
            "repair": diagnoser.run(case, read=False, repair=True)}


@pytest.mark.parametrize("kind", ["inputs", "run", "repair"])
def test_a_written_report_reads_back_exactly(reports: dict[str, Report], kind: str) -> None:
    report = reports[kind]
    written = json.dumps(report.to_dict(), indent=2, ensure_ascii=False)  # as the nightly runner stores it
    back = read_report(written)
    assert back == report
    assert json.dumps(back.to_dict(), indent=2, ensure_ascii=False) == written
    assert read_report(written.encode()) == read_report(json.loads(written)) == report
    assert (back.sampling is None) == (kind == "inputs") and bool(back.repairs) == (kind == "repair")


def test_a_report_without_a_newer_optional_field_loads_with_its_default(reports: dict[str, Report]) -> None:
    stored = reports["run"].to_dict()
    del stored["basis"], stored["input"]["stance"], stored["input"]["conflict"]["state"]
    del stored["sampling"]["control"], stored["sampling"]["runs"][0]["temperature_last_divergence"]
    for sample in stored["sampling"]["runs"][0]["samples"]:
        del sample["answer_kind"]
    back = read_report(stored)
    assert back.basis is None and back.input.stance is None and back.input.conflict.state == "none"
    assert back.sampling.control is None and back.sampling.runs[0].temperature_last_divergence == 0.0
    assert {s.answer_kind for s in back.sampling.runs[0].samples} == {"none"}
    assert back.sampling.runs[0].samples[0].text == reports["run"].sampling.runs[0].samples[0].text


def test_what_is_not_a_report_names_the_field(reports: dict[str, Report]) -> None:
    stored = reports["run"].to_dict()
    stored["sampling"]["runs"][0]["samples"][0]["finish_reason"] = "eos"
    with pytest.raises(msgspec.ValidationError, match=r"\$\.sampling\.runs\[0\]\.samples\[0\]\.finish_reason"):
        read_report(stored)
