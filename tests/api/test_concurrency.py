"""50 clients submit at once against a queue of capacity 20: no 5xx, no lost job.

In-process (httpx over the ASGI app, one event loop, the handlers' database
work in Litestar's thread pool, as under uvicorn), on SQLite and PostgreSQL.
"""

from __future__ import annotations

import asyncio

import httpx
import psycopg
from sqlalchemy import func, select

from api.app import create_app
from api.db.models import Diagnosis
from tests.api.conftest import FakeInline, ListQueue, service_settings, small_case

CLIENTS = 50
CAPACITY = 20


async def _burst(*apps) -> list[httpx.Response]:
    """``CLIENTS`` submissions released together, spread over ``apps`` in turn."""
    clients = [httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver") for app in apps]
    try:
        start = asyncio.Event()

        async def submit(i: int) -> httpx.Response:
            await start.wait()
            return await clients[i % len(clients)].post("/v1/diagnoses", json=small_case(f"burst-{i}"))

        tasks = [asyncio.create_task(submit(i)) for i in range(CLIENTS)]
        await asyncio.sleep(0)
        start.set()
        return await asyncio.gather(*tasks)
    finally:
        for client in clients:
            await client.aclose()


def _check(responses: list[httpx.Response], queued_ids: list[str], db) -> None:
    with db.session() as session:
        stored = set(session.scalars(select(Diagnosis.id).where(Diagnosis.status == "queued")))
        total = session.scalar(select(func.count()).select_from(Diagnosis))
    codes = [r.status_code for r in responses]
    assert set(codes) <= {202, 503}, codes
    accepted = [r.json()["id"] for r in responses if r.status_code == 202]
    refused = [r for r in responses if r.status_code == 503]
    assert accepted and refused
    assert all(r.headers["retry-after"] and r.headers["content-type"].startswith("application/problem+json")
               for r in refused)
    assert len(set(accepted)) == len(accepted)
    assert sorted(queued_ids) == sorted(accepted)  # every accepted job was handed to the queue, once
    assert stored == set(accepted) and total == len(accepted)  # none lost, none stored without a 202
    assert len(accepted) <= CAPACITY, f"{len(accepted)} accepted over a capacity of {CAPACITY}"


def test_fifty_concurrent_submissions_are_accepted_or_refused_never_lost(database_url):
    queue = ListQueue()
    app = create_app(service_settings(database_url, capacity=CAPACITY), queue=queue, inline=FakeInline())
    try:
        responses = asyncio.run(_burst(app))  # 50 requests: under the default 120/minute per client
        _check(responses, queue.items, app.state.service.db)
    finally:
        app.state.service.db.dispose()


def test_two_api_processes_share_one_capacity_on_postgresql(postgres_url):
    """Two apps on one database, as two ``diagnose serve`` replicas: the capacity holds across them."""
    from api.db.migrate import upgrade

    upgrade(postgres_url)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("TRUNCATE findings, diagnoses, fingerprints CASCADE")
    queues = [ListQueue(), ListQueue()]
    apps = [create_app(service_settings(postgres_url, capacity=CAPACITY), queue=q, inline=FakeInline(), migrate=False)
            for q in queues]
    try:
        responses = asyncio.run(_burst(*apps))
        _check(responses, queues[0].items + queues[1].items, apps[0].state.service.db)
    finally:
        for app in apps:
            app.state.service.db.dispose()
