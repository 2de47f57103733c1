"""DiagnosisRunner: claims, exactly-once recording, cancellation, shutdown, retry limits."""

from __future__ import annotations

import msgspec
import pytest
from sqlalchemy import func, select
from sqlalchemy.exc import OperationalError

from api.db.migrate import upgrade
from api.db.models import Diagnosis, FindingRow
from api.db.session import Database
from api.jobs.runner import MAX_ATTEMPTS, DatabaseUnavailable, DiagnosisRunner, Interrupted, with_database_retries
from api.services.diagnoses import DiagnosisService
from diagnose.errors import CaseError
from tests.api.conftest import FakeDiagnoser, FakeInline, ListQueue, service_settings, small_case


@pytest.fixture
def env(database_url):
    upgrade(database_url)
    db = Database(database_url)
    queue = ListQueue()
    service = DiagnosisService(db, queue, service_settings(database_url), FakeInline())
    yield db, queue, service
    db.dispose()


def _runner(db, diagnoser) -> DiagnosisRunner:
    return DiagnosisRunner(db, lambda: diagnoser)


def _findings(db, diagnosis_id) -> int:
    with db.session() as session:
        return session.scalar(select(func.count()).select_from(FindingRow).where(FindingRow.diagnosis_id == diagnosis_id))


def test_runs_once_and_a_second_delivery_is_skipped(env):
    db, queue, service = env
    diagnoser = FakeDiagnoser()
    runner = _runner(db, diagnoser)
    diagnosis_id = service.submit(small_case()).id
    runner.execute(diagnosis_id)
    runner.execute(diagnosis_id)  # the queue delivered it again (e.g. a lost ack)
    done = service.get(diagnosis_id)
    assert done.status == "done" and done.attempts == 1 and done.report["findings"][0]["rule"] == "test.run"
    assert diagnoser.calls == [("run", "small")]
    assert _findings(db, diagnosis_id) == 1


def test_a_repair_request_runs_the_pipeline_with_repairs(env):
    db, _, service = env
    diagnoser = FakeDiagnoser()
    case = small_case(seeds=4)  # 12 samples plus a repair budget of 48: within max_samples 64
    diagnosis_id = service.submit(case, mode="repair").id
    _runner(db, diagnoser).execute(diagnosis_id)
    assert diagnoser.calls == [("repair", "small")]
    assert service.get(diagnosis_id).mode == "repair"


def test_a_claim_left_by_a_dead_worker_is_taken_over(env):
    db, _, service = env
    diagnosis_id = service.submit(small_case()).id
    with db.session() as session:  # what a worker that died mid-run leaves behind
        row = session.get(Diagnosis, diagnosis_id)
        row.status, row.attempts = "running", 1
    _runner(db, FakeDiagnoser()).execute(diagnosis_id)
    assert service.get(diagnosis_id).status == "done"
    assert service.get(diagnosis_id).attempts == 2


def test_gives_up_after_max_attempts(env):
    db, _, service = env
    diagnosis_id = service.submit(small_case()).id
    with db.session() as session:
        row = session.get(Diagnosis, diagnosis_id)
        row.status, row.attempts = "running", MAX_ATTEMPTS
    diagnoser = FakeDiagnoser()
    _runner(db, diagnoser).execute(diagnosis_id)
    failed = service.get(diagnosis_id)
    assert failed.status == "failed" and "attempts" in failed.error["detail"]
    assert diagnoser.calls == []


class CancellingDiagnoser(FakeDiagnoser):
    """Asks for cancellation through the service halfway through its decode steps."""

    def __init__(self, service, steps: int) -> None:
        super().__init__(steps=steps)
        self.service, self.diagnosis_id = service, None

    def run(self, case, seed_offset: int = 0):
        self.calls.append(("run", case.id))
        self.progress.phase("sampling", total=self.steps)
        for step in range(self.steps):
            if step == self.steps // 2:
                self.service.cancel(self.diagnosis_id)
                self.progress.phase("still sampling")  # a phase change always saves and checks
            self.progress.update(step)
        raise AssertionError("cancellation did not stop the run")


def test_cancelling_a_running_diagnosis_stops_it(env):
    db, _, service = env
    diagnosis_id = service.submit(small_case()).id
    diagnoser = CancellingDiagnoser(service, steps=10)
    diagnoser.diagnosis_id = diagnosis_id
    _runner(db, diagnoser).execute(diagnosis_id)
    cancelled = service.get(diagnosis_id)
    assert cancelled.status == "cancelled" and cancelled.report is msgspec.UNSET
    assert _findings(db, diagnosis_id) == 0


def test_a_cancelled_queued_diagnosis_never_runs(env):
    db, _, service = env
    diagnosis_id = service.submit(small_case()).id
    service.cancel(diagnosis_id)
    diagnoser = FakeDiagnoser()
    _runner(db, diagnoser).execute(diagnosis_id)
    assert service.get(diagnosis_id).status == "cancelled" and diagnoser.calls == []


def test_shutdown_puts_the_running_diagnosis_back(env):
    db, _, service = env
    diagnosis_id = service.submit(small_case()).id
    runner = _runner(db, FakeDiagnoser(steps=3))
    runner.stopping.set()
    with pytest.raises(Interrupted):
        runner.execute(diagnosis_id)
    back = service.get(diagnosis_id)
    assert back.status == "queued" and back.attempts == 0
    runner.stopping.clear()
    runner.execute(diagnosis_id)
    assert service.get(diagnosis_id).status == "done"


def test_engine_errors_fail_the_diagnosis_with_the_field(env):
    db, _, service = env
    diagnosis_id = service.submit(small_case()).id
    _runner(db, FakeDiagnoser(fail=CaseError("documents[0].text", "unreadable"))).execute(diagnosis_id)
    failed = service.get(diagnosis_id)
    assert failed.status == "failed"
    assert failed.error["field"] == "documents[0].text" and failed.error["title"] == "invalid case"


def test_a_bug_fails_the_diagnosis_instead_of_looping(env):
    db, _, service = env
    diagnosis_id = service.submit(small_case()).id
    _runner(db, FakeDiagnoser(fail=ZeroDivisionError("oops"))).execute(diagnosis_id)
    failed = service.get(diagnosis_id)
    assert failed.status == "failed" and "ZeroDivisionError" in failed.error["detail"]


def test_progress_is_visible_while_running(env):
    db, _, service = env
    diagnosis_id = service.submit(small_case()).id
    seen = {}

    class Watching(FakeDiagnoser):
        def run(self, case, seed_offset: int = 0):
            self.progress.phase("sampling 4 rows", total=4)
            seen.update(msgspec.to_builtins(service.get(diagnosis_id)))
            return super().run(case, seed_offset)

    _runner(db, Watching()).execute(diagnosis_id)
    assert seen["status"] == "running" and seen["progress"] == {"phase": "sampling 4 rows", "completed": 0, "total": 4}
    assert service.get(diagnosis_id).progress is msgspec.UNSET


def _unreachable() -> OperationalError:
    return OperationalError("SELECT 1", {}, Exception("the database system is shutting down"))


def test_progress_lost_to_a_database_restart_does_not_cost_the_diagnosis(env, monkeypatch):
    db, _, service = env
    diagnosis_id = service.submit(small_case()).id

    def down(*args, **kwargs):
        raise _unreachable()

    monkeypatch.setattr("api.jobs.runner.set_progress", down)
    _runner(db, FakeDiagnoser(steps=5)).execute(diagnosis_id)
    assert service.get(diagnosis_id).status == "done"


def test_writes_are_retried_while_the_database_is_away(monkeypatch):
    monkeypatch.setattr("api.jobs.runner.RETRY_DELAYS_S", (0, 0, 0))
    calls = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise _unreachable()
        return "written"

    assert with_database_retries(flaky, "test") == "written" and len(calls) == 3

    def down() -> None:
        raise _unreachable()

    with pytest.raises(DatabaseUnavailable):
        with_database_retries(down, "test")


class TickingDiagnoser(FakeDiagnoser):
    """Reports progress every few milliseconds for ``seconds``, then returns its report."""

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds

    def run(self, case, seed_offset: int = 0):
        import time

        self.calls.append(("run", case.id))
        self.progress.phase("sampling", total=None)
        started = time.monotonic()
        while time.monotonic() - started < self.seconds:
            self.progress.update(int((time.monotonic() - started) * 100))
            time.sleep(0.01)
        return super().run(case, seed_offset)


def test_a_diagnosis_past_its_time_limit_is_failed_at_its_next_progress_report(env):
    import time

    db, _, service = env
    diagnosis_id = service.submit(small_case()).id
    runner = DiagnosisRunner(db, lambda: TickingDiagnoser(seconds=5), time_limit_s=0.3)
    started = time.monotonic()
    runner.execute(diagnosis_id)
    took = time.monotonic() - started
    failed = service.get(diagnosis_id)
    assert failed.status == "failed" and failed.error["title"] == "time limit", failed
    assert "0.3 s" in failed.error["detail"] and "RAG_DIAGNOSE_JOB_TIMEOUT_S" in failed.error["detail"]
    assert took < 3, f"stopped only after {took:.1f} s"
    assert runner.overdue_s() == 0 and runner.running_since is None
    assert _findings(db, diagnosis_id) == 0


def test_the_attempt_limit_is_a_setting(env):
    db, _, service = env
    diagnosis_id = service.submit(small_case()).id
    with db.session() as session:  # one worker already froze on it
        row = session.get(Diagnosis, diagnosis_id)
        row.status, row.attempts = "running", 1
    diagnoser = FakeDiagnoser()
    DiagnosisRunner(db, lambda: diagnoser, max_attempts=1).execute(diagnosis_id)
    failed = service.get(diagnosis_id)
    assert failed.status == "failed" and "RAG_DIAGNOSE_MAX_ATTEMPTS" in failed.error["detail"]
    assert diagnoser.calls == []
    from api.settings import ServiceSettings

    queue = ServiceSettings.from_env({"RAG_DIAGNOSE_MAX_ATTEMPTS": "5", "RAG_DIAGNOSE_JOB_TIMEOUT_S": "90"}).queue
    assert (queue.max_attempts, queue.job_timeout_s) == (5, 90.0)
    with pytest.raises(ValueError, match="RAG_DIAGNOSE_MAX_ATTEMPTS"):
        DiagnosisRunner(db, lambda: diagnoser, max_attempts=0)


def test_two_workers_recording_a_new_environment_at_once_both_succeed(postgres_url):
    """Each saw no fingerprint row and inserts it: the second must not fail its diagnosis."""
    from api.db.models import Fingerprint
    from api.db.store import record_report
    from tests.api.conftest import FakeReport

    upgrade(postgres_url)
    db = Database(postgres_url)
    service = DiagnosisService(db, ListQueue(), service_settings(postgres_url), FakeInline())
    ids = [service.submit(small_case(f"race-{i}")).id for i in range(2)]
    from diagnose.case import case_from_dict

    report = FakeReport(case_from_dict(small_case("race")), "run").to_dict()
    report["environment"] = {"model_id": "fake", "race": ids[0]}  # new to this database
    try:
        with db.session() as first:
            looked = first.get(Fingerprint, "none")  # noqa: F841 - the first worker's transaction is open
            with db.session() as second:
                record_report(second, second.get(Diagnosis, ids[1]), report)
            real_get = first.get
            first.get = lambda cls, key, **kw: None if cls is Fingerprint else real_get(cls, key, **kw)
            record_report(first, first.get(Diagnosis, ids[0]), report)  # it looked before the other committed
        assert [service.get(i).status for i in ids] == ["done", "done"]
    finally:
        db.dispose()
