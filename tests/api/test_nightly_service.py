"""Nightly runs through the service: fan-out over the queue, the gate against the baseline run,
finalization by the worker's hook (exactly once), resumption, JUnit/Markdown; SQLite and PostgreSQL.

The queue is a list and the test plays the worker (``DiagnosisRunner.execute`` on each queued id);
the diagnoser is a fake whose reports are contract-shaped, so the real gate statistics run.
"""

from __future__ import annotations

import threading
import time
import xml.etree.ElementTree as ET
from typing import Any

import pytest
from litestar.testing import TestClient
from sqlalchemy import select

from api.app import create_app
from api.db.models import Diagnosis, NightlyItem, NightlyRun
from api.db.session import Database
from api.db.store import claim
from api.jobs.runner import MAX_ATTEMPTS, DiagnosisRunner
from api.services.nightly import NightlyService
from api.services.nightly_gate import RunFinalizer, finalize
from diagnose.case import case_from_dict
from diagnose.nightly.runner import seed_offset_for
from diagnose.report import Report
from tests.api.conftest import FakeInline, ListQueue, service_settings, small_case
from tests.api.test_diagnoses_api import assert_problem
from tests.nightly.test_runner import fake_report

SAMPLING = {"seeds": 8, "temperatures": [0.7, 1.0], "max_new_tokens": 24}
CASES = [f"case-{i:02d}" for i in range(10)]


def library_case(case_id: str, **changes: Any) -> dict[str, Any]:
    case = {**small_case(case_id, **SAMPLING), "tags": ["smoke"]}
    case.update(changes)
    return case


class GateDiagnoser:
    """Reports from ``fake_report`` (a document saying 1901 opens a second center); ``truncate``
    makes every sample of those cases hit the length limit (a regression with unchanged content),
    ``crash`` makes those cases raise."""

    def __init__(self) -> None:
        from diagnose.progress import SilentProgress

        self.progress = SilentProgress()
        self.calls: list[tuple[str, int]] = []
        self.truncate: set[str] = set()
        self.crash: set[str] = set()

    def run(self, case, seed_offset: int = 0) -> Report:
        self.calls.append((case.id, seed_offset))
        if case.id in self.crash:
            raise RuntimeError(f"model exploded on {case.id}")
        report = fake_report(case, seed_offset)
        if case.id in self.truncate:
            for run in report.sampling.runs:
                run.truncation_rate = 1.0
                for sample in run.samples:
                    sample.finish_reason = "length"
        return report


class CountingFinalizer(RunFinalizer):
    def __init__(self, db: Database) -> None:
        super().__init__(db)
        self.closed: list[str] = []
        self.calls = 0

    def __call__(self, diagnosis_id: str) -> bool:
        self.calls += 1
        closed = super().__call__(diagnosis_id)
        if closed:
            self.closed.append(diagnosis_id)
        return closed


class Harness:
    """The app over one database, a list queue, and a worker the test drives."""

    def __init__(self, url: str) -> None:
        self.app = create_app(service_settings(url), queue=ListQueue(), inline=FakeInline())
        self.client = TestClient(self.app)
        self.db: Database = self.app.state.service.db
        self.queue: ListQueue = self.app.state.service.queue
        self.diagnoser = GateDiagnoser()
        self.finalizer = CountingFinalizer(self.db)
        self.runner = DiagnosisRunner(self.db, lambda: self.diagnoser, on_finished=self.finalizer)

    def push(self, *cases: dict[str, Any]) -> None:
        response = self.client.post("/v1/library", json={"cases": list(cases)})
        assert response.status_code == 200, response.text

    def start(self, **body: Any) -> dict[str, Any]:
        response = self.client.post("/v1/nightly-runs", json=body)
        assert response.status_code == 202, response.text
        return response.json()

    def work(self, limit: int | None = None) -> int:
        """Run queued diagnoses in order, like one worker; returns how many."""
        done = 0
        while self.queue.items and (limit is None or done < limit):
            self.runner.execute(self.queue.items.pop(0))
            done += 1
        return done

    def stored(self, run_id: str) -> NightlyRun:
        with self.db.session() as session:
            return session.get(NightlyRun, run_id)

    def diagnosis_ids(self, run_id: str) -> dict[str, str]:
        with self.db.session() as session:
            items = session.scalars(select(NightlyItem).where(NightlyItem.run_id == run_id))
            return {item.library_case.case_id: item.diagnosis_id for item in items}


@pytest.fixture
def harness(database_url):
    h = Harness(database_url)
    with h.client:
        h.push(*(library_case(c) for c in CASES))
        yield h


def by_case(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["case_id"]: c for c in summary["cases"]}


def test_run_fans_out_and_the_last_diagnosis_finishes_it(harness):
    started = harness.start()
    run_id = started["id"]
    assert started["status"] == "running" and started["progress"] == {"finished": 0, "total": len(CASES)}
    assert started["links"]["junit"] == f"/v1/nightly-runs/{run_id}/junit.xml"
    assert sorted(harness.queue.items) == sorted(harness.diagnosis_ids(run_id).values())

    harness.work(limit=len(CASES) - 1)
    assert harness.stored(run_id).status == "running"
    progress = harness.client.get(f"/v1/nightly-runs/{run_id}").json()["progress"]
    assert progress == {"finished": len(CASES) - 1, "total": len(CASES)}

    harness.work()
    run = harness.stored(run_id)  # read from the database: nobody polled the API
    assert run.status == "done" and run.finished_at is not None
    assert run.summary["counts"] == {"pass": len(CASES), "warn": 0, "fail": 0}
    assert run.summary["gate"] == "pass" and run.summary["baseline_id"] is None and run.summary["fail_on"] == "fail"
    assert {c["changes"][0]["kind"] for c in run.summary["cases"]} == {"new_case"}
    assert len(harness.finalizer.closed) == 1 and harness.finalizer.calls == len(CASES)
    offset = seed_offset_for(run_id)
    assert run.seed_offset == offset and {s for _, s in harness.diagnoser.calls} == {offset}
    assert sorted(c for c, _ in harness.diagnoser.calls) == CASES

    body = harness.client.get(f"/v1/nightly-runs/{run_id}").json()
    assert body["status"] == "done" and body["gate"] == "pass" and body["summary"]["cases"][0]["diagnosis_id"]
    library = {c["case_id"]: c["latest"] for c in harness.client.get("/v1/library").json()}
    assert all(latest["run_id"] == run_id and latest["verdict"] == "ok" for latest in library.values())


def test_second_run_compares_with_the_first_and_flags_the_regressions(harness):
    first = harness.start()["id"]
    harness.work()
    harness.push(library_case("case-03", documents=[
        {"id": "d0", "text": "The bridge opened in 1930."}, {"id": "d1", "text": "The bridge opened in 1901."}]))
    harness.diagnoser.truncate = {"case-07"}
    second = harness.start()
    assert second["baseline_id"] == first and second["links"]["baseline"] == f"/v1/nightly-runs/{first}"
    harness.work()

    summary = harness.client.get(f"/v1/nightly-runs/{second['id']}").json()["summary"]
    assert summary["counts"] == {"pass": len(CASES) - 2, "warn": 0, "fail": 2} and summary["gate"] == "fail"
    cases = by_case(summary)
    assert {c for c, x in cases.items() if x["status"] != "pass"} == {"case-03", "case-07"}
    changed = {c["kind"]: c for c in cases["case-03"]["changes"]}
    assert changed["case_changed"]["severity"] == "info"
    assert changed["new_finding"]["severity"] == "fail"
    assert changed["new_finding"]["evidence"]["rule"] == "input.value_conflict"
    truncated = [c for c in cases["case-07"]["changes"] if c["kind"] == "truncation_rate"][0]
    assert truncated["severity"] == "fail" and truncated["evidence"]["p_value"] < truncated["evidence"]["alpha"]
    assert (truncated["evidence"]["baseline_k"], truncated["evidence"]["current_k"]) == (0, 16)
    assert not any(c["kind"] == "case_changed" for c in cases["case-07"]["changes"])
    before, now = harness.diagnosis_ids(first), harness.diagnosis_ids(second["id"])
    assert all(cases[c]["baseline_diagnosis_id"] == before[c] and cases[c]["diagnosis_id"] == now[c] for c in CASES)

    junit = harness.client.get(f"/v1/nightly-runs/{second['id']}/junit.xml")
    assert junit.status_code == 200 and junit.headers["content-type"].startswith("application/xml")
    suite = ET.fromstring(junit.content).find("testsuite")
    testcases = suite.findall("testcase")
    assert sorted(t.get("name") for t in testcases) == CASES and suite.get("failures") == "2"
    assert {t.get("name") for t in testcases if t.find("failure") is not None} == {"case-03", "case-07"}
    properties = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert properties["baseline"] == first and properties["run_id"] == second["id"]
    markdown = harness.client.get(f"/v1/nightly-runs/{second['id']}/summary.md").text
    assert "gate failed" in markdown and "case-07" in markdown and r"truncation\_rate" in markdown

    third = harness.start(baseline=first, fail_on="never")  # the same regressions, reported but not gating
    harness.work()
    body = harness.client.get(f"/v1/nightly-runs/{third['id']}").json()
    assert body["baseline_id"] == first and body["gate"] == "warn" and body["counts"]["fail"] == 2


def test_errored_and_cancelled_cases_fail_the_gate(harness):
    harness.diagnoser.crash = {"case-02"}
    run_id = harness.start()["id"]
    cancelled = harness.diagnosis_ids(run_id)["case-05"]
    assert harness.client.delete(f"/v1/diagnoses/{cancelled}").status_code == 202
    harness.work()
    body = harness.client.get(f"/v1/nightly-runs/{run_id}").json()
    assert body["status"] == "done" and body["gate"] == "fail" and body["counts"]["fail"] == 2
    cases = by_case(body["summary"])
    assert cases["case-02"]["changes"][0]["kind"] == "case_error"
    assert "model exploded" in cases["case-02"]["changes"][0]["message"]
    assert cases["case-05"]["changes"][0]["evidence"]["error"].startswith("cancelled")


def test_finalization_happens_exactly_once(harness):
    run_id = harness.start()["id"]
    harness.runner.on_finished = None  # the hook is lost: e.g. the worker died right after the last result
    harness.work()
    assert harness.stored(run_id).status == "running"

    barrier, results = threading.Barrier(3), []

    def close() -> None:
        barrier.wait()
        results.append(finalize(harness.db, run_id))

    threads = [threading.Thread(target=close) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(results) == [False, False, True]
    finished_at = harness.stored(run_id).finished_at

    harness.runner.on_finished = harness.finalizer  # a redelivered job calls the hook again: a no-op
    harness.runner.execute(harness.diagnosis_ids(run_id)["case-00"])
    assert harness.finalizer.calls == 1 and harness.finalizer.closed == []
    assert harness.client.get(f"/v1/nightly-runs/{run_id}").json()["finished_at"] is not None
    assert harness.stored(run_id).finished_at == finished_at


def test_a_failing_hook_leaves_the_result_recorded(harness):
    run_id = harness.start()["id"]

    def broken(diagnosis_id: str) -> None:
        raise RuntimeError("database gone")

    harness.runner.on_finished = broken
    diagnosis_id = harness.queue.items[0]
    harness.runner.execute(diagnosis_id)  # logged, not raised: the job is not retried for it
    assert harness.client.get(f"/v1/diagnoses/{diagnosis_id}").json()["status"] == "done"
    assert harness.stored(run_id).status == "running"


def test_a_read_finishes_a_run_whose_hook_was_missed(harness):
    run_id = harness.start()["id"]
    harness.runner.on_finished = None
    harness.work()
    listed = harness.client.get("/v1/nightly-runs").json()
    assert [r["id"] for r in listed] == [run_id] and listed[0]["status"] == "done"
    assert listed[0]["counts"]["pass"] == len(CASES) and "summary" not in listed[0]


def test_restart_continues_the_run_and_never_redoes_finished_cases(harness, database_url):
    run_id = harness.start()["id"]
    queued = list(harness.queue.items)
    harness.work(limit=4)
    with harness.db.session() as session:  # a fifth is claimed by a worker that then dies: its lease runs out
        # A worker runs the job whose turn it is (fair order: created_at, then id), not the one it
        # was handed, so which four ran is not the queue's first four.
        fifth = min(session.scalars(select(Diagnosis.id).where(Diagnosis.id.in_(queued), Diagnosis.status == "queued")))
        assert claim(session, fifth, MAX_ATTEMPTS, lease_s=0) is not None

    # The restarted service: new connections, a new worker; the durable queue delivers
    # again every job that was not acknowledged, which here is all of them.
    restarted = GateDiagnoser()
    db = Database(database_url)
    runner = DiagnosisRunner(db, lambda: restarted, on_finished=RunFinalizer(db))
    for diagnosis_id in queued:
        runner.execute(diagnosis_id)

    finished_before = {c for c, _ in harness.diagnoser.calls}
    assert len(finished_before) == 4  # the claimed fifth runs again, the four finished ones do not
    assert sorted(c for c, _ in restarted.calls) == sorted(set(CASES) - finished_before)
    with db.session() as session:
        attempts = {d.id: d.attempts for d in session.scalars(select(Diagnosis).where(Diagnosis.id.in_(queued)))}
    assert attempts[fifth] == 2 and all(attempts[d] == 1 for d in queued if d != fifth)
    assert harness.stored(run_id).status == "done"
    assert harness.stored(run_id).summary["counts"]["pass"] == len(CASES)


def test_start_errors_are_problems_naming_the_field(harness):
    assert_problem(harness.client.post("/v1/nightly-runs", json={"tags": ["absent"]}), 422, "tags")
    assert_problem(harness.client.post("/v1/nightly-runs", json={"baseline": "nope"}), 422, "baseline")
    running = harness.start()["id"]
    assert_problem(harness.client.post("/v1/nightly-runs", json={"baseline": running}), 422, "baseline")
    assert harness.client.post("/v1/nightly-runs", json={"fail_on": "sometimes"}).status_code == 400
    assert_problem(harness.client.get(f"/v1/nightly-runs/{running}/junit.xml"), 409)
    assert_problem(harness.client.get("/v1/nightly-runs/nope"), 404, "id")


def test_tags_select_cases_and_baselines(harness):
    harness.push(library_case("extra", tags=["other"]))
    tagged = harness.start(tags=["smoke"])
    everything = harness.client.post("/v1/nightly-runs").json()  # no body: every case, the defaults
    assert everything["fail_on"] == "fail" and everything["tags"] == []
    assert tagged["progress"]["total"] == len(CASES) and everything["progress"]["total"] == len(CASES) + 1
    harness.work()
    assert harness.start(tags=["smoke"])["baseline_id"] == tagged["id"]
    assert harness.start()["baseline_id"] == everything["id"]


class BrokenQueue(ListQueue):
    def enqueue(self, diagnosis_id: str) -> None:
        if len(self.items) == 3:
            raise ConnectionError("queue database is down")
        super().enqueue(diagnosis_id)


def test_a_queue_failure_records_the_rest_as_not_run(database_url):
    app = create_app(service_settings(database_url), queue=BrokenQueue(), inline=FakeInline())
    with TestClient(app) as client:
        client.post("/v1/library", json={"cases": [library_case(c) for c in CASES]})
        problem = assert_problem(client.post("/v1/nightly-runs", json={}), 503)
        assert "7 of 10" in problem["detail"]
        runner = DiagnosisRunner(app.state.service.db, GateDiagnoser, on_finished=RunFinalizer(app.state.service.db))
        for diagnosis_id in app.state.service.queue.items:
            runner.execute(diagnosis_id)
        run = client.get("/v1/nightly-runs").json()[0]
        assert run["status"] == "done" and run["counts"] == {"pass": 3, "warn": 0, "fail": 7}


def test_nightly_cron_registers_a_periodic_task():
    from api.jobs.postgres import PostgresQueue

    url = "postgresql://nobody@127.0.0.1:1/none"  # nothing connects until a worker runs
    tasks = lambda q: {p.task.name: p.cron for p in q.app.periodic_registry.periodic_tasks.values()}  # noqa: E731
    assert "start_nightly_run" not in tasks(PostgresQueue(url))
    assert tasks(PostgresQueue(url, nightly_cron="0 3 * * *"))["start_nightly_run"] == "0 3 * * *"
    with pytest.raises(ValueError, match="RAG_DIAGNOSE_NIGHTLY_CRON"):
        PostgresQueue(url, nightly_cron="at three")


def test_scheduled_run_on_a_postgres_worker(postgres_url):
    """The cron tick starts a run inside a real procrastinate worker, which also runs its diagnoses
    and, through the hook, finishes it."""
    import os
    import signal

    import psycopg

    from api.db.migrate import upgrade
    from api.jobs.postgres import PostgresQueue
    from api.services.library import LibraryService

    upgrade(postgres_url)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("TRUNCATE nightly_items, nightly_runs, library_cases, findings, diagnoses CASCADE")
    db = Database(postgres_url)
    LibraryService(db).push([case_from_dict(library_case(c)) for c in CASES[:3]])
    queue = PostgresQueue(postgres_url, stalled_after_s=30, nightly_cron="* * * * * */2")
    diagnoser, started = GateDiagnoser(), []

    def start_once() -> None:
        if not started:
            started.append(NightlyService(db, queue).start_run())

    def stop_when_done() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with db.session() as session:
                if session.scalar(select(NightlyRun.status).where(NightlyRun.status == "done")):
                    break
            time.sleep(0.3)
        os.kill(os.getpid(), signal.SIGINT)  # run_worker's handler stops the worker

    stopper = threading.Thread(target=stop_when_done, daemon=True)
    stopper.start()
    try:
        queue.run_worker(DiagnosisRunner(db, lambda: diagnoser, on_finished=RunFinalizer(db)), heartbeat_s=1,
                         start_nightly=start_once)
    finally:
        stopper.join(5)
        with psycopg.connect(postgres_url, autocommit=True) as conn:  # later workers here know no such task
            conn.execute("DELETE FROM procrastinate_jobs WHERE task_name = 'start_nightly_run'")
    assert started, "the periodic task never ran"
    run = NightlyService(db, queue).get(started[0].id)
    assert run.status == "done" and run.counts == {"pass": 3, "warn": 0, "fail": 0}
    assert sorted(c for c, _ in diagnoser.calls) == CASES[:3]


@pytest.mark.models
def test_real_models_run_a_small_library_through_the_embedded_queue(tmp_path):
    """End to end on the embedded models: the SQLite ack-queue's worker thread diagnoses both
    cases and its hook finishes the run; nothing but the database is polled."""
    url = f"sqlite:///{tmp_path / 'service.db'}"
    app = create_app(service_settings(url), inline=FakeInline())
    small = {"seeds": 4, "temperatures": [0.7], "max_new_tokens": 16}
    cases = [
        {"id": "bridge", "question": "When did the bridge open?", "sampling": small,
         "documents": [{"id": "d1", "text": "The Golden Gate Bridge opened to traffic in 1937."}]},
        {"id": "capital", "question": "What is the capital of Australia?", "sampling": small,
         "documents": [{"id": "d1", "text": "Canberra is the capital city of Australia."}]},
    ]
    with TestClient(app) as client:
        assert client.post("/v1/library", json={"cases": cases}).status_code == 200
        run_id = client.post("/v1/nightly-runs", json={}).json()["id"]
        db = app.state.service.db
        deadline = time.monotonic() + 600  # about 60 s on 2 idle cores; minutes when they are shared
        while time.monotonic() < deadline:
            with db.session() as session:
                if session.get(NightlyRun, run_id).status == "done":
                    break
            time.sleep(0.5)
        body = client.get(f"/v1/nightly-runs/{run_id}").json()
        assert body["status"] == "done", body
        assert body["counts"] == {"pass": 2, "warn": 0, "fail": 0} and body["gate"] == "pass"
        with db.session() as session:
            reports = [d.report for d in session.scalars(select(Diagnosis).where(Diagnosis.status == "done"))]
        assert sorted(r["case_id"] for r in reports) == ["bridge", "capital"]
        assert all(r["sampling"]["runs"][0]["n"] == 4 for r in reports)
        suite = ET.fromstring(client.get(f"/v1/nightly-runs/{run_id}/junit.xml").content).find("testsuite")
        assert sorted(t.get("name") for t in suite.findall("testcase")) == ["bridge", "capital"]
