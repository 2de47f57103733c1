"""Checks that a report dict carries every contract key with the contract's meaning."""

from __future__ import annotations

import math

STAGES = ["input", "sampling", "length", "environment", "framework"]
RUN_KEYS = {
    "temperature", "n", "first_token_divergence", "mean_entropy", "perplexity",
    "repetition_rate", "semantic_entropy", "compliance_rate", "truncation_rate",
    "center_pull", "samples",
}


def check_report(report: dict, case: dict, sampled: bool) -> None:
    assert report["case_id"] == case["id"]
    assert report["verdict"] in ("ok", "warn", "fail")
    doc_ids = [d["id"] for d in case.get("documents", [])]
    _check_input(report["input"], doc_ids)
    _check_findings(report["findings"], report["verdict"])
    assert isinstance(report["environment"], dict) and report["environment"]
    if not sampled:
        assert "sampling" not in report
        return
    centers = [c["id"] for c in report["input"]["gravity_centers"]]
    runs = report["sampling"]["runs"]
    assert [r["temperature"] for r in runs] == case["sampling"]["temperatures"]
    for run in runs:
        _check_run(run, case["sampling"]["seeds"], centers)


def _check_input(inp: dict, doc_ids: list[str]) -> None:
    centers = inp["gravity_centers"]
    noise = inp["noise_documents"]
    placed = [d for c in centers for d in c["documents"]] + list(noise)
    assert sorted(placed) == sorted(doc_ids), "every document is in exactly one center or noise"
    for c in centers:
        assert set(c) >= {"id", "documents", "mass", "label"}
        assert c["documents"] and isinstance(c["label"], str) and c["label"]
    if centers:
        assert math.isclose(sum(c["mass"] for c in centers), 1.0, abs_tol=1e-6)
    conflict = inp["conflict"]
    assert isinstance(conflict["detected"], bool)
    assert 0.0 <= conflict["score"] <= 1.0
    assert conflict["probability"] == conflict["score"] and conflict["state"] in ("conflict", "unsure", "none")
    assert conflict["detected"] == (conflict["state"] == "conflict")
    assert inp.get("stance") in (None, "assessed", "not_assessed")
    for pair in conflict["pairs"]:
        assert set(pair) >= {"a", "b", "kind", "evidence"}
        assert pair["a"] in doc_ids and pair["b"] in doc_ids


def _check_findings(findings: list[dict], verdict: str) -> None:
    order = [STAGES.index(f["stage"]) for f in findings]
    assert order == sorted(order), "findings follow the checklist order"
    for f in findings:
        assert f["severity"] in ("info", "warn", "fail") and f["rule"] and f["advice"]
        assert isinstance(f["evidence"], dict)
    worst = max((("info", "warn", "fail").index(f["severity"]) for f in findings), default=0)
    assert verdict == {0: "ok", 1: "warn", 2: "fail"}[worst]


def _check_run(run: dict, seeds: int, centers: list[str]) -> None:
    assert set(run) >= RUN_KEYS
    n = run["n"]
    assert n == seeds == len(run["samples"])
    assert 1 / n - 1e-9 <= run["first_token_divergence"] <= 1.0
    unavailable = set(run.get("unavailable", []))
    for key in ("mean_entropy", "perplexity"):
        assert (run[key] is None) == (key in unavailable), f"{key} is null exactly when unavailable"
    assert run["mean_entropy"] is None or run["mean_entropy"] >= 0
    assert run["perplexity"] is None or run["perplexity"] >= 1.0
    for key in ("repetition_rate", "compliance_rate", "truncation_rate"):
        assert 0.0 <= run[key] <= 1.0
    assert 0.0 <= run["semantic_entropy"] <= math.log(n) + 1e-9
    pull = run["center_pull"]
    assert set(pull) == set(centers) | {"none"}
    assert math.isclose(sum(pull.values()), 1.0, abs_tol=1e-6)
    lengths = [s["finish_reason"] == "length" for s in run["samples"]]
    assert math.isclose(run["truncation_rate"], sum(lengths) / n)
    for s in run["samples"]:
        assert set(s) >= {"seed", "text", "finish_reason"}
        assert s["finish_reason"] in ("stop", "length")
