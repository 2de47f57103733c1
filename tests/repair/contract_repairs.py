"""The ``repairs`` keys of contract section 6, checked on a report dict."""

from __future__ import annotations

VERDICTS = ("fixes", "helps", "no_effect", "worse")


def check_repairs(report: dict) -> None:
    assert isinstance(report["repairs"], list)
    ranks = [VERDICTS.index(r["verdict"]) for r in report["repairs"]]
    assert ranks == sorted(ranks), "best verified repair first"
    for repair in report["repairs"]:
        assert set(repair) >= {"id", "change", "diff", "verdict", "runs"}
        assert isinstance(repair["id"], str) and repair["id"]
        assert isinstance(repair["change"], dict) and isinstance(repair["change"]["kind"], str)
        assert isinstance(repair["diff"], str)
        assert repair["verdict"] in VERDICTS
        for run in repair["runs"]:
            assert set(run) >= {"temperature", "before", "after", "p"}
            assert isinstance(run["temperature"], float)
            assert set(run["before"]) == set(run["after"])
            for metric, p in run["p"].items():
                assert metric in run["before"] and 0.0 <= p <= 1.0
    ids = [r["id"] for r in report["repairs"]] + [s["id"] for s in report.get("repairs_skipped", [])]
    assert len(ids) == len(set(ids)), "a candidate is either sampled or skipped, once"
