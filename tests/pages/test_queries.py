"""The pages' reads on SQLite and PostgreSQL: recent diagnoses, library history, gates, run progress."""

from __future__ import annotations

import pytest

from api.db.migrate import upgrade
from api.db.session import Database
from api.pages.queries import PageQueries
from tests.pages.reports import case, report
from tests.pages.seed import at, store_diagnosis, store_library_case, store_run


@pytest.fixture
def db(database_url):
    upgrade(database_url)
    database = Database(database_url)
    yield database
    database.dispose()


def test_recent_is_newest_first_and_filters_by_case(db):
    old = store_diagnosis(db, case("bridge"), report(), created_at=at(0))
    other = store_diagnosis(db, case("tower"), report(case_id="tower"), created_at=at(1))
    new = store_diagnosis(db, case("bridge"), None, status="queued", created_at=at(2))
    queries = PageQueries(db)
    assert [d.id for d in queries.recent()] == [new, other, old]
    assert [d.id for d in queries.recent(case_id="bridge")] == [new, old]
    assert queries.recent(limit=1)[0].status == "queued"


def test_diagnosis_detail_and_the_previous_finished_one(db):
    first = store_diagnosis(db, case(), report(), created_at=at(0))
    store_diagnosis(db, case(), None, status="failed", created_at=at(1), error={"title": "x", "detail": "y"})
    second = store_diagnosis(db, case(), report(), created_at=at(2))
    queries = PageQueries(db)
    detail = queries.diagnosis(second)
    assert detail.report["case_id"] == "bridge" and detail.case["question"] and detail.summary.verdict == "ok"
    assert queries.previous_done(detail.summary) == first
    assert queries.previous_done(queries.diagnosis(first).summary) is None
    assert queries.diagnosis("missing") is None


def test_library_lists_current_versions_with_history_across_versions_and_last_gate(db):
    v1 = store_library_case(db, case("bridge", ["one"]), ["dates"], current=False, created_at=at(0))
    v2 = store_library_case(db, case("bridge", ["one", "two"]), ["dates", "smoke"], created_at=at(10))
    other = store_library_case(db, case("tower"), [], created_at=at(0))
    d1 = store_diagnosis(db, case("bridge", ["one"]), report(), created_at=at(1))
    d2 = store_diagnosis(db, case("bridge", ["one", "two"]), None, status="failed", created_at=at(11))
    d3 = store_diagnosis(db, case("bridge", ["one", "two"]), report(), created_at=at(21))
    t1 = store_diagnosis(db, case("tower"), report(case_id="tower"), created_at=at(1))
    gate = {"counts": {"pass": 1}, "gate": "pass", "fail_on": "fail",
            "cases": [{"case_id": "bridge", "status": "warn", "changes": []}]}
    store_run(db, [(v1, d1), (other, t1)], summary={**gate, "cases": [{"case_id": "tower", "status": "pass"}]},
              created_at=at(1))
    store_run(db, [(v2, d2)], summary=gate, created_at=at(11))
    store_run(db, [(v2, d3)], created_at=at(21))  # still running: no gate yet
    entries = {e.case_id: e for e in PageQueries(db).library()}
    assert sorted(entries) == ["bridge", "tower"]
    bridge = entries["bridge"]
    assert bridge.tags == ["dates", "smoke"] and len(bridge.case["documents"]) == 2
    assert [(p.diagnosis_id, p.status) for p in bridge.history] == [(d1, "done"), (d2, "failed"), (d3, "done")]
    assert bridge.last_gate.status == "warn"
    assert entries["tower"].last_gate.status == "pass" and [p.diagnosis_id for p in entries["tower"].history] == [t1]


def test_runs_count_their_diagnoses_by_status(db):
    lib = store_library_case(db, case("bridge"), [])
    lib2 = store_library_case(db, case("tower"), [])
    done = store_diagnosis(db, case("bridge"), report(), created_at=at(0))
    queued = store_diagnosis(db, case("tower"), None, status="queued", created_at=at(0))
    finished = store_run(db, [(lib, done)], summary={"counts": {"pass": 1}, "gate": "pass", "cases": []},
                         created_at=at(0))
    running = store_run(db, [(lib, done), (lib2, queued)], baseline_id=finished, created_at=at(5))
    queries = PageQueries(db)
    runs = queries.runs()
    assert [r.id for r in runs] == [running, finished]
    assert runs[0].item_statuses == {"done": 1, "queued": 1} and runs[0].summary is None
    assert runs[0].baseline_id == finished
    detail = queries.run(running)
    assert [(i.case_id, i.status) for i in detail.items] == [("bridge", "done"), ("tower", "queued")]
    assert queries.run("missing") is None
