"""Candidates re-sampled on the fake model: a removed camp removes the split; a clean case is never 'fixed'."""

from __future__ import annotations

import json

import msgspec

from diagnose.report import Report
from diagnose.repair import default_budget
from tests.repair.contract_repairs import check_repairs
from tests.repair.fakes import bridge_case, diagnose_fake, repair_fake


def test_removing_the_minority_center_fixes_the_split():
    done = diagnose_fake(bridge_case("1937", "1952"))
    assert {"input.competing_centers", "sampling.split_center_pull"} <= {f.rule for f in done.findings}
    outcome = repair_fake(done)
    best = outcome.repairs[0]
    assert best.change["kind"] in ("remove_center", "keep_center") and best.verdict == "fixes"
    assert best.resolved
    split = next(t for t in best.tests if t.metric == "center_split")
    assert split.outcome == "better" and split.after == 0.0 and split.before > 0.3
    assert split.p_adjusted < 0.05
    # The repair says what the answer then is: the kept camp's year.
    kept = best.change.get("center") if best.change["kind"] == "keep_center" else "c1"
    assert best.answer is not None and best.answer.center == kept and best.answer.share == 1.0
    assert best.answer.text in ("1937", "1952") and best.note and "hides a conflict" in best.note
    assert outcome.overview.best == best.id
    assert outcome.overview.headline.startswith(f"best verified repair: {best.id}")
    # The instruction cannot change what the fake follows: measured, not claimed.
    instruction = next(r for r in outcome.repairs if r.id == "disagreement_instruction")
    assert instruction.verdict == "no_effect" and not instruction.resolved


def test_the_verified_finding_says_so_and_points_at_the_repair():
    done = diagnose_fake(bridge_case("1937", "1952"))
    outcome = repair_fake(done)
    best = outcome.repairs[0]
    split = next(f for f in outcome.findings if f.rule == "sampling.split_center_pull")
    assert split.evidence["verified"]["repair"] == best.id
    assert f"(repair {best.id})" in split.advice and "Verified on this prompt: center split" in split.advice
    assert [r["id"] for r in split.evidence["repairs"]] == [r.id for r in outcome.repairs]


def test_a_clean_case_gets_no_fixes():
    # top_k 50 with top_p 0.9: the portability finding fires and calls for pinned parameters.
    done = diagnose_fake(bridge_case("1937", "1937", top_k=50, top_p=0.9))
    rules = {f.rule for f in done.findings}
    assert "input.competing_centers" not in rules and "sampling.split_center_pull" not in rules
    outcome = repair_fake(done)
    assert all(r.verdict != "fixes" for r in outcome.repairs)
    assert outcome.overview.best is None or outcome.repairs[0].verdict == "helps"


def test_same_seeds_give_the_same_verdicts():
    first = repair_fake(diagnose_fake(bridge_case("1937", "1952")))
    again = repair_fake(diagnose_fake(bridge_case("1937", "1952")))
    strip = lambda o: [msgspec.structs.replace(r, wall_seconds=0.0) for r in o.repairs]  # noqa: E731
    assert strip(first) == strip(again)


def test_budget_skips_later_candidates_in_order_and_lists_them():
    # c1 holds d2 and d3 (1952), c2 holds d1 (1937); each candidate costs 8 seeds x 2 temperatures.
    done = diagnose_fake(bridge_case("1937", "1952", "1952", seeds=8))
    outcome = repair_fake(done, budget=16)
    assert outcome.overview.budget == 16 and outcome.overview.spent == 16
    assert [r.id for r in outcome.repairs] == ["remove_center:c2"]  # keep_center:c1 is the same case
    assert [s.id for s in outcome.skipped] == ["disagreement_instruction"]
    skipped = outcome.skipped[0]
    assert skipped.samples == 16 and skipped.reason == "needs 16 samples; 0 of the budget of 16 left"
    assert "+system: If the documents disagree" in skipped.diff
    assert outcome.overview.headline.endswith("; 1 tried; 1 skipped (budget)")
    # Nothing sampled with a budget of 0: every candidate is listed as skipped, none dropped.
    none = repair_fake(done, budget=0)
    assert none.repairs == [] and [s.id for s in none.skipped] == ["remove_center:c2", "disagreement_instruction"]
    assert none.overview.headline == "no repair sampled; 2 skipped (budget)"


def test_default_budget_is_four_times_the_case():
    case = bridge_case("1937", "1952", seeds=6, temperatures=(0.2, 0.8))
    assert default_budget(case) == 4 * 6 * 2


def test_the_progress_bar_names_each_candidate():
    phases: list[str] = []

    class Recorder:
        def phase(self, description: str, total: int | None = None) -> None:
            phases.append(description)

        def update(self, completed: int) -> None:
            pass

    done = diagnose_fake(bridge_case("1937", "1952"))
    outcome = repair_fake(done, progress=Recorder())
    sampled = [p for p in phases if p.startswith("repair sampling: ")]
    assert len(sampled) == 1 and "in one batch" in sampled[0]  # the fake's candidates share their settings
    assert all(r.id in sampled[0] for r in outcome.repairs)
    assert any("remove_center:c2" in p for p in sampled)
    measured = [p for p in phases if p.endswith(": measuring")]
    assert len(measured) == len(outcome.repairs)


def test_report_json_carries_the_contract_keys():
    done = diagnose_fake(bridge_case("1937", "1952"))
    outcome = repair_fake(done)
    report = Report(case_id="bridge", verdict="fail", input=done.analysis.report, findings=outcome.findings,
                    environment={"model_id": "fake"}, sampling=done.sampling, repairs=outcome.repairs,
                    repairs_skipped=outcome.skipped, repair=outcome.overview)
    data = json.loads(report.to_json())
    check_repairs(data)
    assert data["repair"]["best"] == data["repairs"][0]["id"]
    first = data["repairs"][0]
    assert [r["temperature"] for r in first["runs"]] == [0.7, 1.2]
    assert set(first["runs"][0]["before"]) == {"center_split", "semantic_entropy"}
    # Without --repair the report keeps its section-3 shape.
    plain = Report(case_id="bridge", verdict="fail", input=done.analysis.report, findings=done.findings,
                   environment={"model_id": "fake"}, sampling=done.sampling).to_dict()
    assert not {"repairs", "repairs_skipped", "repair"} & set(plain)
    # A stored report converts back (the service renders pages from stored dicts).
    assert msgspec.convert(data, Report).repairs[0].id == first["id"]


def test_a_temperature_change_reuses_the_original_samples_and_needs_a_measured_gain():
    # Near-greedy 0.2 with a long budget: the determinism trap fires from the settings alone.
    done = diagnose_fake(msgspec.structs.replace(
        bridge_case("1937", "1937", temperatures=(0.2, 0.7)),
        sampling=msgspec.structs.replace(bridge_case("1937").sampling, temperatures=[0.2, 0.7], max_new_tokens=256)))
    assert "sampling.determinism_trap" in {f.rule for f in done.findings}
    prefills = done.backend.prefills
    outcome = repair_fake(done)
    change = next(r for r in outcome.repairs if r.id == "temperature")
    assert change.change["to"] == [0.7] and change.samples == 0  # 0.7 was sampled already
    assert done.backend.prefills == prefills + sum(1 for r in outcome.repairs if r.samples)
    assert [(run.temperature, run.after_temperature) for run in change.runs] == [(0.2, 0.7)]
    # The finding is gone on the candidate, but the repetition it warns about was never there.
    assert change.resolved and change.verdict == "no_effect"


def test_candidates_are_measured_with_the_original_runs_sampling_settings(monkeypatch):
    from diagnose.repair import runner
    from diagnose.sampling.settings import SamplingSettings

    seen = []
    measure = runner.measure_run

    def spy(*args):
        seen.append(args[-1])
        return measure(*args)

    monkeypatch.setattr(runner, "measure_run", spy)
    configured = SamplingSettings(meaning_similarity=0.9, bifurcation_margin=0.2)
    repair_fake(diagnose_fake(bridge_case("1937", "1952")), sampling_settings=configured)
    assert seen and all(s is configured for s in seen)
