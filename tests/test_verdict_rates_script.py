"""scripts/verdict-rates: the plan it runs, and its summary of an earlier JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.script_module import load_script

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "verdict-rates"


def _module():
    return load_script("verdict-rates")


def test_cases_run_agreeing_and_conflicting_in_turn_set_by_set():
    drawn = [[("a", Path(f"a{i}"), c) for i, c in enumerate([True, True, False])],
             [("b", Path(f"b{i}"), c) for i, c in enumerate([False, True])]]
    plan = _module().interleaved(drawn)
    assert [p.name for _, p, _ in plan] == ["a2", "b0", "a0", "b1", "a1"]


def test_summarize_reads_an_earlier_json(tmp_path: Path):
    rows = [{"set": "s", "case": f"c{i}", "conflict": conflict, "verdict": verdict, "input_verdict": alone,
             "seconds": 10.0, "seconds_without_controls": None, "sampling_seconds": 4.0, "control_seconds": 3.0,
             "findings": [], "decided": {}}
            for i, (conflict, verdict, alone) in enumerate([(False, "ok", "warn"), (False, "warn", "ok"),
                                                             (True, "fail", "warn"), (True, "ok", "ok")])]
    path = tmp_path / "rows.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    out = subprocess.run([sys.executable, str(SCRIPT), "--summarize", str(path)], capture_output=True, text=True,
                         check=True).stdout
    assert out.startswith("VERDICT-RATES dev agree_fail=0/2 agree_warn=1/2 conflict_flagged=1/2 "
                          "input_agree_flagged=1/2 input_conflict_flagged=1/2 median_s=10.0 control_s=3.0 "
                          "control_share_of_run=0.30 controls=on")
