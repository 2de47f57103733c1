#!/usr/bin/env python3
"""Record request/response pairs of a real OpenAI-compatible server for replay tests.

Usage::

    python scripts/record_openai_exchange.py URL MODEL OUTFILE \
        [--framework llamacpp] [--server NAME] [--server-version X.Y.Z] [--model-file PATH]

``URL`` is the base URL before ``/chat/completions`` (e.g. ``http://127.0.0.1:8089/v1``).
The script sends a small fixed set of requests, built by
:class:`diagnose.decode.remote.RemoteBackend` exactly as a diagnosis would send
them: a two-document RAG prompt whose documents disagree, seeds 0 and 1 at
temperatures 0.7 and 1.2, ``max_tokens`` 16, ``logprobs`` with 2 alternatives;
then the two seeds at 0.7 once more, to show whether the same seed gives the same
text. It writes one JSON file: a header saying which server, version and model
produced it and when, the case's messages and sampling settings, and every
exchange (request body, HTTP status, response body).

``tests/sampling/test_remote.py`` replays the file through ``httpx.MockTransport``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import platform
import sys
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from diagnose.case import Case, Document, SamplingSpec  # noqa: E402
from diagnose.prompt import build_messages  # noqa: E402
from diagnose.decode.engine import Row  # noqa: E402
from diagnose.decode.remote import FRAMEWORKS, RemoteBackend  # noqa: E402

CASE = Case(
    id="recorded-broken-bow",
    question="What is the population of Broken Bow, Oklahoma?",
    system="Answer only from the documents, in one short sentence.",
    documents=[
        Document(id="d1", text="As of the census of 2010, Broken Bow, Oklahoma had 4,120 people."),
        Document(id="d2", text="Broken Bow is a city in McCurtain County, Oklahoma, with a "
                               "population of 3,559 at the 2020 census."),
    ],
    sampling=SamplingSpec(
        seeds=2, temperatures=[0.7, 1.2], top_p=0.9, top_k=50, repetition_penalty=1.0,
        max_new_tokens=16,
    ),
)
ROWS = [Row(t, s) for t in CASE.sampling.temperatures for s in range(CASE.sampling.seeds)]
REPEATS = [Row(0.7, 0), Row(0.7, 1)]


def _probe(client: httpx.Client, url: str) -> Any:
    """GET a metadata endpoint; None when the server has none."""
    try:
        response = client.get(url, timeout=10)
    except httpx.HTTPError:
        return None
    if response.status_code != 200:
        return None
    try:
        return response.json()
    except ValueError:
        return None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url", help="base URL before /chat/completions, e.g. http://127.0.0.1:8089/v1")
    parser.add_argument("model", help="model name to send in each request")
    parser.add_argument("outfile", type=Path)
    parser.add_argument("--framework", choices=FRAMEWORKS, default="llamacpp")
    parser.add_argument("--server", default=None, help="server implementation, e.g. llama-cpp-python")
    parser.add_argument("--server-version", default=None)
    parser.add_argument("--model-file", type=Path, default=None, help="model file, for its sha256")
    parser.add_argument("--note", default=None, help="free text for the header (how the server was built)")
    args = parser.parse_args(argv)

    messages = build_messages(CASE)
    spec = CASE.sampling
    exchanges: list[dict[str, Any]] = []
    with httpx.Client(timeout=300) as client:
        backend = RemoteBackend(args.url, args.model, args.framework, client=client)
        base = backend.base_url
        root = base[: -len("/v1")] if base.endswith("/v1") else base
        server_info = {
            "models": _probe(client, f"{base}/models"),
            "props": _probe(client, f"{root}/props"),  # llama-server only
            "version": _probe(client, f"{root}/version"),  # vLLM only
        }
        for kind, rows in (("sample", ROWS), ("repeat", REPEATS)):
            for row in rows:
                body = backend.request_body(messages, row, spec)
                response = client.post(backend.url, json=body)
                try:
                    payload: Any = response.json()
                except ValueError:
                    payload = response.text
                exchanges.append({
                    "kind": kind,
                    "row": {"temperature": row.temperature, "seed": row.seed},
                    "request": {"method": "POST", "path": "/chat/completions", "body": body},
                    "response": {"status": response.status_code, "body": payload},
                })
                text = payload["choices"][0]["message"]["content"] if response.status_code == 200 else payload
                print(f"{kind} T={row.temperature} seed={row.seed}: HTTP {response.status_code} {text!r}")
                if response.status_code != 200:
                    print("server refused a request; nothing written", file=sys.stderr)
                    return 1

    props = server_info.get("props") or {}
    record = {
        "header": {
            "what": "recorded exchange of a real OpenAI-compatible server, for replay tests",
            "recorded_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "recorded_by": "scripts/record_openai_exchange.py",
            "framework": args.framework,
            "server": args.server,
            "server_version": args.server_version or props.get("build_info"),
            "base_url": args.url,
            "model": args.model,
            "model_file": args.model_file.name if args.model_file else None,
            "model_sha256": _sha256(args.model_file) if args.model_file else None,
            "host": {"python": platform.python_version(), "machine": platform.machine()},
            "note": args.note,
            "server_info": server_info,
        },
        "case": {
            "id": CASE.id,
            "messages": messages,
            "sampling": {
                "top_p": spec.top_p, "top_k": spec.top_k,
                "repetition_penalty": spec.repetition_penalty,
                "max_new_tokens": spec.max_new_tokens,
            },
        },
        "exchanges": exchanges,
    }
    args.outfile.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.outfile.with_suffix(args.outfile.suffix + ".tmp")
    tmp.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(args.outfile)
    same = [
        e["response"]["body"]["choices"][0]["message"]["content"]
        for e in exchanges if e["row"]["temperature"] == 0.7
    ]
    print(f"wrote {args.outfile} ({len(exchanges)} exchanges); repeats identical: "
          f"{same[0] == same[2] and same[1] == same[3]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
