"""Fixtures for the service: databases (SQLite file and a real PostgreSQL), fakes, apps.

PostgreSQL: ``RAG_DIAGNOSE_TEST_POSTGRES`` (default postgresql://postgres@127.0.0.1:5432/postgres)
must reach a server that may create databases; each test session creates its
own database and drops it afterwards. ``.ci/run`` makes sure the server is up.
"""

from __future__ import annotations

import datetime as dt
import os
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import psycopg
import pytest

from api.db.models import Diagnosis
from api.settings import Limits, QueueSettings, ServiceSettings
from diagnose.settings import DatabaseSettings, Settings

ADMIN_URL = os.environ.get("RAG_DIAGNOSE_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres")
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def small_case(case_id: str = "small", documents: int = 2, **sampling: Any) -> dict[str, Any]:
    docs = [{"id": f"d{i}", "text": f"The bridge opened in {1930 + i}."} for i in range(documents)]
    case = {"id": case_id, "question": "When did the bridge open?", "documents": docs}
    if sampling:
        case["sampling"] = sampling
    return case


class FakeReport:
    """What a Diagnoser returns, reduced to ``to_dict``; findings name the mode."""

    def __init__(self, case, mode: str) -> None:
        self.case, self.mode = case, mode

    def to_dict(self) -> dict[str, Any]:
        return {
            "case_id": self.case.id,
            "verdict": "warn",
            "input": {"gravity_centers": [], "noise_documents": [], "conflict": {"detected": False, "score": 0.0, "pairs": []}},
            "findings": [{"stage": "input", "rule": f"test.{self.mode}", "severity": "warn", "evidence": {"n": len(self.case.documents)}, "advice": "none"}],
            "environment": {"model_id": "fake", "dtype": "float32"},
        }


class FakeDiagnoser:
    """Counts calls; ``steps`` progress updates are reported during ``run`` (for cancellation)."""

    def __init__(self, steps: int = 0, fail: Exception | None = None) -> None:
        from diagnose.progress import SilentProgress

        self.progress = SilentProgress()
        self.calls: list[tuple[str, str]] = []
        self.steps, self.fail = steps, fail

    def inputs(self, case):
        self.calls.append(("inputs", case.id))
        return FakeReport(case, "inputs")

    def run(self, case, seed_offset: int = 0, repair: bool = False):
        self.calls.append(("repair" if repair else "run", case.id))
        self.progress.phase("sampling", total=self.steps)
        for step in range(self.steps):
            self.progress.update(step)
        if self.fail is not None:
            raise self.fail
        return FakeReport(case, "run")


class FakeInline:
    """The API's inline engine without models: prompt tokens are counted as words."""

    def __init__(self) -> None:
        self.diagnoser = FakeDiagnoser()

    def prompt_tokens(self, case) -> int:
        if case.model not in ("default",):
            raise ValueError(f"unknown model {case.model!r}")
        return len(case.question.split()) + sum(len(d.text.split()) for d in case.documents)

    def inputs(self, case) -> dict:
        return self.diagnoser.inputs(case).to_dict()

    def warm_up(self) -> None:
        pass


class ListQueue:
    """A queue that only records what was enqueued (the service tests run no worker)."""

    kind = "test"

    def __init__(self) -> None:
        self.items: list[str] = []

    def enqueue(self, diagnosis_id: str) -> None:
        self.items.append(diagnosis_id)

    def start(self) -> None:
        pass

    def stop(self, timeout: float = 5.0) -> None:
        pass

    def workers_alive(self) -> int:
        return 0


def measured(app, tokens_per_s: float) -> None:
    """A finished diagnosis that makes the workers' measured rate ``tokens_per_s``."""
    now = dt.datetime.now(dt.timezone.utc)
    with app.state.service.db.session() as session:
        session.add(Diagnosis(status="done", mode="run", case_id="measured", case={}, request_key="measured",
                              cost=int(tokens_per_s * 100), started_at=now - dt.timedelta(seconds=100),
                              finished_at=now))


def service_settings(url: str, **queue: Any) -> ServiceSettings:
    engine = replace(Settings(), database=DatabaseSettings(url=url))
    return ServiceSettings(engine=engine, limits=Limits(max_documents=20, max_body_bytes=200_000, max_samples=64),
                           queue=replace(QueueSettings(), **queue))


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'service.db'}"


@pytest.fixture(scope="session")
def postgres_url():
    """A fresh PostgreSQL database for this test session."""
    name = f"rag_diagnose_test_{uuid.uuid4().hex[:8]}"
    try:
        admin = psycopg.connect(ADMIN_URL, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        pytest.fail(f"PostgreSQL is not reachable at {ADMIN_URL} ({exc}); start it or set RAG_DIAGNOSE_TEST_POSTGRES")
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    base = ADMIN_URL.rsplit("/", 1)[0]
    yield f"{base}/{name}"
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request, tmp_path) -> str:
    """Each test using this runs on both databases (PostgreSQL: tables emptied first)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'service.db'}"
    url = request.getfixturevalue("postgres_url")
    from api.db.migrate import upgrade

    upgrade(url)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("TRUNCATE nightly_items, nightly_runs, library_cases, findings, diagnoses, fingerprints, "
                     "sessions, api_keys CASCADE")
    return url
