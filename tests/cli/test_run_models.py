"""The real pipeline on the embedded models, on every fixture (CI runs these every time)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from diagnose.case_file import load_case
from diagnose.pipeline import Diagnoser
from diagnose.report import Report
from diagnose.settings import Settings
from tests.contract import check_report

pytestmark = pytest.mark.models

FIXTURES = sorted(Path("fixtures/cases").glob("*.yaml"))


@pytest.fixture(scope="module")
def diagnoser() -> Diagnoser:
    return Diagnoser.from_settings(Settings.from_env())


class _Runs(dict):
    """Fixture name -> its full run, each computed on first use and kept (``-k`` runs only those asked for)."""

    def __init__(self, diagnoser: Diagnoser) -> None:
        super().__init__()
        self.diagnoser = diagnoser

    def __missing__(self, name: str) -> Report:
        report = self[name] = self.diagnoser.run(load_case(Path("fixtures/cases") / f"{name}.yaml"))
        return report


@pytest.fixture(scope="module")
def run_reports(diagnoser: Diagnoser) -> dict[str, Report]:
    """Each fixture's full run, computed once for the module."""
    return _Runs(diagnoser)


def _case_dict(path: Path) -> dict:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data.setdefault("sampling", {})
    data["sampling"].setdefault("seeds", 8)
    data["sampling"].setdefault("temperatures", [0.2, 0.7, 1.2])
    return data


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_inputs_report_carries_every_contract_key(diagnoser: Diagnoser, path: Path):
    report = diagnoser.inputs(load_case(path)).to_dict()
    check_report(json.loads(json.dumps(report)), _case_dict(path), sampled=False)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_run_report_carries_every_contract_key(run_reports: dict[str, Report], path: Path):
    report = run_reports[path.stem].to_dict()
    check_report(json.loads(json.dumps(report)), _case_dict(path), sampled=True)


# Findings each fixture must show (and must not show) in a full run.
EXPECTED = {
    "clean-single-answer": ({"environment.quantized_model"}, {"input.competing_centers", "input.noise_share"}),
    "contradicting-years": ({"input.competing_centers"}, {"input.noise_share"}),
    "off-topic-document": ({"input.noise_share"}, {"input.competing_centers"}),
    "json-format": ({"input.contradictory_instructions"}, {"input.noise_share"}),
    "chinese-language": ({"input.competing_centers"}, set()),
    "ambiguous-entity": ({"input.competing_centers"}, {"input.noise_share"}),
    "sampling-settings-trap": (
        {"sampling.truncation_settings", "sampling.repetition_penalty_high", "sampling.determinism_trap"},
        {"input.competing_centers", "input.noise_share"},
    ),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_shows_its_expected_findings(run_reports: dict[str, Report], name: str):
    must, must_not = EXPECTED[name]
    rules = {f.rule for f in run_reports[name].findings}
    assert must <= rules, f"missing {sorted(must - rules)}; got {sorted(rules)}"
    assert not (must_not & rules), f"unexpected {sorted(must_not & rules)}"


def _json_object_with(text: str, keys: list[str]) -> bool:
    """The json constraint as documented, written out here rather than calling the
    engine's checker: the stripped text, or the body of one fenced block that is the
    whole stripped text (an optional ``json`` tag after the opening fence), is a JSON
    object holding every key."""
    stripped = text.strip()
    candidates = [stripped]
    if len(stripped) >= 6 and stripped.startswith("```") and stripped.endswith("```"):
        body = stripped[3:-3].lstrip(" \t")
        candidates.append((body[4:] if body[:4].lower() == "json" else body).strip())
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        return isinstance(value, dict) and all(key in value for key in keys)
    return False


def test_json_fixture_measures_compliance(run_reports: dict[str, Report]):
    """compliance_rate is the share of the report's own sample texts that a hand-written
    reading of the case's one constraint accepts."""
    from diagnose.case import JsonConstraint

    (constraint,) = load_case(Path("fixtures/cases/json-format.yaml")).constraints
    assert isinstance(constraint, JsonConstraint) and constraint.keys == ["author", "year"]
    for run in run_reports["json-format"].sampling.runs:
        passed = [_json_object_with(s.text, constraint.keys) for s in run.samples]
        assert [s.compliant for s in run.samples] == passed
        assert run.compliance_rate == pytest.approx(sum(passed) / len(passed))


def test_fixture_branches(diagnoser: Diagnoser):
    """Each fixture exercises the branch it was written for."""
    by_name = {p.stem: diagnoser.inputs(load_case(p)) for p in FIXTURES}
    assert not by_name["clean-single-answer"].input.conflict.detected
    assert len(by_name["clean-single-answer"].input.gravity_centers) == 1
    years = by_name["contradicting-years"].input.conflict
    assert years.detected
    assert any("1937" in p.evidence and "1952" in p.evidence for p in years.pairs)
    assert "d2" in by_name["off-topic-document"].input.noise_documents
    assert "d3" in by_name["chinese-language"].input.noise_documents
    assert by_name["chinese-language"].input.conflict.detected
    assert by_name["json-format"].input.instruction_conflicts


def test_same_case_same_samples(diagnoser: Diagnoser):
    case = load_case(Path("fixtures/cases/contradicting-years.yaml"))
    first, second = diagnoser.run(case), diagnoser.run(case)
    texts = lambda r: [[s.text for s in run.samples] for run in r.sampling.runs]
    assert texts(first) == texts(second)
    assert not any(f.rule == "environment.nondeterministic" for f in first.findings)
    assert first.environment["reproducibility"] == "per_seed"


def test_cli_run_writes_json_and_html(tmp_path: Path):
    out, page = tmp_path / "r.json", tmp_path / "r.html"
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    done = subprocess.run(
        [sys.executable, "-m", "diagnose.cli", "run", "fixtures/cases/contradicting-years.yaml",
         "--out", str(out), "--html", str(page)],
        capture_output=True, text=True, env=env, timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert "verdict" in done.stdout
    report = json.loads(out.read_text(encoding="utf-8"))
    check_report(report, _case_dict(Path("fixtures/cases/contradicting-years.yaml")), sampled=True)
    html = page.read_text(encoding="utf-8")
    assert "contradicting-years" in html and "http://" not in html and "https://" not in html


def test_read_tier_reports_each_documents_own_answer(diagnoser: Diagnoser):
    case = load_case(Path("fixtures/cases/contradicting-years.yaml"))
    report = diagnoser.inputs(case, read=True)
    assert report.input.tier == "read" and diagnoser.inputs(case).input.tier == "static"
    assert [bool(d.read_answer) for d in report.input.documents] == [True] * len(case.documents)
    assert all(d.yes_margin is None for d in report.input.documents)  # not a yes/no question
    assert report.input.conflict.detected
    check_report(json.loads(report.to_json()), _case_dict(Path("fixtures/cases/contradicting-years.yaml")), sampled=False)


def test_the_read_tier_of_run_asks_the_pairwise_stance_question(diagnoser: Diagnoser):
    # run's reader reports progress; it must still ask whether two sides give the same answer
    from diagnose.case import Case, Document

    case = Case(id="stance", question="Can contractors get the home-office stipend?", documents=[
        Document(id="d0", text="Contractors are eligible for the home-office stipend from their first month."),
        Document(id="d1", text="The home-office stipend is not available to contractors; only employees get it."),
    ])
    report = diagnoser.inputs(case, read=True)
    assert report.input.tier == "read" and report.input.stance == "assessed"
    assert diagnoser.inputs(case).input.stance == "not_assessed"
