"""``diagnose run CASE --repair`` on the embedded models, through the CLI (small: 3 seeds, one temperature)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.contract import check_report
from tests.repair.contract_repairs import check_repairs

pytestmark = pytest.mark.models


def test_cli_repair_on_contradicting_years(tmp_path: Path):
    case = yaml.safe_load(Path("fixtures/cases/contradicting-years.yaml").read_text(encoding="utf-8"))
    case["sampling"] = {"seeds": 3, "temperatures": [0.7], "max_new_tokens": 12}
    path = tmp_path / "case.yaml"
    path.write_text(yaml.safe_dump(case, sort_keys=False), encoding="utf-8")
    out, html = tmp_path / "report.json", tmp_path / "report.html"
    done = subprocess.run(
        [sys.executable, "-m", "diagnose.cli", "run", str(path), "--repair", "--repair-budget", "6",
         "--out", str(out), "--html", str(html)],
        capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"}, timeout=600,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    check_report(report, case, sampled=True)
    check_repairs(report)
    # 6 samples: two candidates of 3 samples run, the rest are listed as skipped.
    assert report["repair"]["budget"] == 6 and report["repair"]["spent"] == 6
    assert len(report["repairs"]) == 2 and report["repairs_skipped"]
    kinds = {r["change"]["kind"] for r in report["repairs"]} | {s["change"]["kind"] for s in report["repairs_skipped"]}
    assert {"remove_center", "disagreement_instruction"} <= kinds
    for repair in report["repairs"]:
        assert repair["diff"].startswith("--- contradicting-years.yaml\n")
        assert [run["temperature"] for run in repair["runs"]] == [0.7]
    assert done.stdout.startswith("repair: ")  # the summary leads with the repair headline
    assert 'id="repairs"' in html.read_text(encoding="utf-8")
    # Without --repair, --repair-budget is a usage error.
    bad = subprocess.run([sys.executable, "-m", "diagnose.cli", "run", str(path), "--repair-budget", "6"],
                         capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"}, timeout=120)
    assert bad.returncode == 2 and "--repair-budget needs --repair" in bad.stderr
