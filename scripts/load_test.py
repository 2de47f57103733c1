#!/usr/bin/env python3
"""Load test of the REST service: a burst of concurrent submissions, then inline diagnoses.

1. Burst: ``--clients`` clients (default 50) each POST a distinct ``run`` case,
   released at the same moment. Counts 202 / 429 / 503 / 5xx and the latency
   of accepting a job; then reads every accepted id back (a job the service
   said 202 to and cannot show is *lost*).
2. Inline: one ``mode=inputs`` diagnosis of a ``--documents``-document case to
   warm up, then ``--inline`` more (distinct case ids, so none is answered from
   the stored identical request), one at a time; their latency is the
   inputs-only diagnosis as a client sees it. Each has new document texts, so
   the embedder's cache does not answer them (``--same-documents``: it does).

Without ``--url`` it starts ``diagnose serve --no-worker`` on a free loopback
port in a temporary directory (SQLite there, or ``--database-url``), with the
per-client rate limit lifted unless ``--rate-limit`` is given, and stops it
afterwards. The last line is machine-readable::

    LOAD accepted=20 refused=30 server_errors=0 lost=0 accept_p50_ms=... accept_p95_ms=... inline_p50_ms=... inline_p95_ms=...

Examples::

    RAG_DIAGNOSE_CAPACITY=20 python scripts/load_test.py          # started here, SQLite
    python scripts/load_test.py --capacity 20 --database-url postgresql://postgres@127.0.0.1/load
    python scripts/load_test.py --url http://127.0.0.1:8000 --api-key KEY
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import httpx

TEXTS = [
    "The Broken Bow bridge opened to traffic in 1931 after two years of construction.",
    "City records list the bridge's opening ceremony on 4 July 1934.",
    "Broken Bow is a city in McCurtain County, Oklahoma, with about 4,000 residents.",
    "The bridge spans the Mountain Fork River and is 210 metres long.",
    "A 1931 newspaper article describes the first cars crossing the new bridge.",
    "Local historians dispute the date; some sources give 1934 for the dedication.",
    "The county fair is held every September at the fairgrounds north of town.",
    "Beavers Bend State Park lies ten miles north of Broken Bow.",
    "The bridge was renovated in 1988 and again in 2012.",
    "Trains reached Broken Bow in 1911 on the Texas, Oklahoma and Eastern line.",
]


def case(case_id: str, documents: int, salt: str = "") -> dict:
    """``salt`` makes every document text new, so none comes from the embedding cache."""
    docs = [{"id": f"d{i}", "text": TEXTS[i % len(TEXTS)] + ("" if i < len(TEXTS) else f" ({i})") + salt}
            for i in range(documents)]
    return {"id": case_id, "question": "When did the Broken Bow bridge open?", "documents": docs}


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (``p`` in 0..100); NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def started_service(args: argparse.Namespace) -> Iterator[str]:
    """``diagnose serve --no-worker`` in a temporary directory; yields its base URL."""
    diagnose = Path(sys.executable).with_name("diagnose")
    port = _free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE", "1")}
    env["RAG_DIAGNOSE_DEFAULT_RATE_LIMIT"] = args.rate_limit or "1000000/minute"
    if args.capacity is not None:
        env["RAG_DIAGNOSE_CAPACITY"] = str(args.capacity)
    if args.database_url:
        env["DATABASE_URL"] = args.database_url
    with tempfile.TemporaryDirectory(prefix="rag-diagnose-load-") as directory:
        log = open(Path(directory) / "serve.log", "w")
        proc = subprocess.Popen([str(diagnose), "serve", "--host", "127.0.0.1", "--port", str(port), "--no-worker",
                                 "--log-level", "warning"], cwd=directory, env=env, stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_until_up(url, proc, timeout_s=300)
            print(f"started diagnose serve (pid {proc.pid}) at {url}", file=sys.stderr)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            log.close()
            if proc.returncode not in (0, -15):
                print((Path(directory) / "serve.log").read_text()[-4000:], file=sys.stderr)


def _wait_until_up(url: str, proc: subprocess.Popen, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"diagnose serve exited with {proc.returncode} before it answered")
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code in (200, 503):
                return
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"diagnose serve did not answer /healthz within {timeout_s:.0f} s")


async def burst(client: httpx.AsyncClient, clients: int, run_tag: str) -> tuple[list[int], list[float], list[str]]:
    """All submissions released at once; returns status codes, latencies (ms) of 202s, accepted ids."""
    start = asyncio.Event()

    async def submit(i: int) -> tuple[int, float, str | None]:
        body = case(f"load-{run_tag}-{i}", documents=3)
        await start.wait()
        began = time.perf_counter()
        response = await client.post("/v1/diagnoses", json=body)
        elapsed = (time.perf_counter() - began) * 1000
        return response.status_code, elapsed, response.json().get("id") if response.status_code == 202 else None

    tasks = [asyncio.create_task(submit(i)) for i in range(clients)]
    await asyncio.sleep(0.1)  # every task is waiting on the event
    start.set()
    results = await asyncio.gather(*tasks)
    codes = [code for code, _, _ in results]
    accept_ms = [ms for code, ms, _ in results if code == 202]
    ids = [i for _, _, i in results if i]
    return codes, accept_ms, ids


async def lost_jobs(client: httpx.AsyncClient, ids: list[str]) -> list[str]:
    """Accepted ids the service cannot show now (429s are waited out, within a minute)."""
    lost = []
    for diagnosis_id in ids:
        for _ in range(3):
            response = await client.get(f"/v1/diagnoses/{diagnosis_id}")
            if response.status_code != 429:
                break
            await asyncio.sleep(min(30, int(response.headers.get("retry-after", "5"))))
        if response.status_code != 200 or response.json().get("id") != diagnosis_id:
            lost.append(diagnosis_id)
    return lost


async def inline(client: httpx.AsyncClient, count: int, documents: int, run_tag: str,
                 same_documents: bool) -> tuple[list[float], Counter]:
    """One warm-up, then ``count`` inputs-only diagnoses in a row; latencies (ms) of those answered done."""
    outcomes: Counter = Counter()
    warm = await client.post("/v1/diagnoses?mode=inputs", json=case(f"inline-{run_tag}-warm", documents,
                                                                     "" if same_documents else f" [{run_tag}]"))
    print(f"inline warm-up: {warm.status_code} {warm.json().get('status')}", file=sys.stderr)
    latencies = []
    for i in range(count):
        began = time.perf_counter()
        salt = "" if same_documents else f" [{run_tag}-{i}]"
        response = await client.post("/v1/diagnoses?mode=inputs", json=case(f"inline-{run_tag}-{i}", documents, salt))
        elapsed = (time.perf_counter() - began) * 1000
        status = response.json().get("status") if response.status_code == 202 else None
        outcomes[f"{response.status_code}:{status}" if status else str(response.status_code)] += 1
        if status == "done":
            latencies.append(elapsed)
    return latencies, outcomes


async def main_async(url: str, args: argparse.Namespace) -> int:
    headers = {"Authorization": f"Bearer {args.api_key}"} if args.api_key else {}
    limits = httpx.Limits(max_connections=args.clients + 5, max_keepalive_connections=args.clients + 5)
    run_tag = f"{int(time.time())}-{os.getpid()}"  # distinct cases on every run, so none is reused
    async with httpx.AsyncClient(base_url=url, headers=headers, limits=limits, timeout=120) as client:
        health = await client.get("/healthz")
        print(f"healthz before: {health.status_code} {health.text}", file=sys.stderr)

        codes, accept_ms, ids = await burst(client, args.clients, run_tag)
        counts = Counter(codes)
        server_errors = sum(n for code, n in counts.items() if code >= 500 and code != 503)
        lost = await lost_jobs(client, ids)
        print(f"burst of {args.clients}: " + ", ".join(f"{code}x{n}" for code, n in sorted(counts.items())), file=sys.stderr)
        print(f"accepted ids read back: {len(ids) - len(lost)}/{len(ids)}" + (f"; LOST {lost}" if lost else ""),
              file=sys.stderr)

        inline_ms, outcomes = await inline(client, args.inline, args.documents, run_tag, args.same_documents)
        print(f"inline {args.documents}-document inputs diagnoses"
              f"{' (cached document texts)' if args.same_documents else ''}: {dict(outcomes)}; ms in order: "
              + " ".join(f"{ms:.0f}" for ms in inline_ms), file=sys.stderr)

    print(f"accept latency ms: p50={percentile(accept_ms, 50):.1f} p95={percentile(accept_ms, 95):.1f} "
          f"max={max(accept_ms, default=math.nan):.1f} (n={len(accept_ms)})")
    print(f"inline latency ms: p50={percentile(inline_ms, 50):.1f} p95={percentile(inline_ms, 95):.1f} "
          f"max={max(inline_ms, default=math.nan):.1f} (n={len(inline_ms)})")
    print(f"LOAD accepted={counts[202]} refused={counts[429] + counts[503]} server_errors={server_errors} "
          f"lost={len(lost)} accept_p50_ms={percentile(accept_ms, 50):.1f} accept_p95_ms={percentile(accept_ms, 95):.1f} "
          f"inline_p50_ms={percentile(inline_ms, 50):.1f} inline_p95_ms={percentile(inline_ms, 95):.1f}")
    return 1 if server_errors or lost else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="A running service; without it one is started here.")
    parser.add_argument("--clients", type=int, default=50, help="Concurrent submissions in the burst.")
    parser.add_argument("--inline", type=int, default=20, help="Inline inputs-only diagnoses after the warm-up.")
    parser.add_argument("--documents", type=int, default=10, help="Documents in the inline case.")
    parser.add_argument("--same-documents", action="store_true",
                        help="Inline cases repeat one set of texts (embeddings cached after the warm-up).")
    parser.add_argument("--api-key", help="Sent as Authorization: Bearer KEY.")
    parser.add_argument("--capacity", type=int, help="Started service only: RAG_DIAGNOSE_CAPACITY.")
    parser.add_argument("--database-url", help="Started service only: DATABASE_URL (default: SQLite in a temp dir).")
    parser.add_argument("--rate-limit", help="Started service only: RAG_DIAGNOSE_DEFAULT_RATE_LIMIT (default: lifted).")
    args = parser.parse_args()
    if args.url:
        return asyncio.run(main_async(args.url.rstrip("/"), args))
    with started_service(args) as url:
        return asyncio.run(main_async(url, args))


if __name__ == "__main__":
    sys.exit(main())
