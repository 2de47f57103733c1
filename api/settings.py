"""Service settings: limits, queue and auth knobs, read once from the environment.

The engine's :class:`diagnose.settings.Settings` carries models, database URL and
host/port; this adds what only the service needs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace

from diagnose.settings import Settings, env_value


@dataclass(frozen=True)
class Limits:
    """Request size limits; a case over any of them is refused with 413 or 422."""

    max_body_bytes: int = 2 * 1024 * 1024
    """Bytes of a request body; a larger one gets 413."""
    max_documents: int = 200
    """Documents of one case (413 naming ``documents``)."""
    max_prompt_tokens: int = 16_384
    """Tokens of the assembled prompt, counted with the case model's tokenizer."""
    prompt_chars_per_token: int = 8
    """Characters per token assumed when the assembled prompt's length is checked before
    it is built (and tokenized): ``max_prompt_tokens`` x this is :attr:`max_prompt_chars`.
    Twice what natural text averages, so only a prompt far over the token limit is
    refused by characters; a template that multiplies the prompt is refused unexpanded."""
    max_samples: int = 256
    """Seeds × temperatures of one diagnosis."""
    max_new_tokens: int = 1024
    """``sampling.max_new_tokens`` of one case."""
    allowed_models: str = "default"
    """Comma-separated ``model`` values a request may name. A case file may name a local
    path; over the network that would let any client make the service load any file."""
    max_library_push_cases: int = 200
    """Cases in one ``POST /v1/library``."""
    max_library_push_prompt_chars: int = 2 * 1024 * 1024
    """Assembled prompt characters of all cases of one ``POST /v1/library`` together:
    what the push's token counts cost (about 2 s of tokenizing at the default)."""
    max_library_cases: int = 2000
    """Current cases (distinct case ids) the stored library may hold after a push."""
    max_library_versions: int = 20
    """Versions kept per library case: a push that adds one deletes the oldest beyond this,
    except the current one and those a nightly run points at (which stay for its results)."""
    max_constraints: int = 32
    """Output constraints of one case (``constraints``)."""
    max_pattern_chars: int = 4096
    """Characters of all regex constraint patterns of one case together (each one is compiled
    when the case is read and run against every sample)."""
    max_tags: int = 32
    """Tags of one case (``tags``)."""
    max_text_chars: int = 1024
    """Characters of each short stored field: a tag, a document's ``source``, a ``must_include``
    text, a ``json`` constraint key."""
    max_json_keys: int = 64
    """Keys of one ``json`` constraint (``constraints[i].keys``)."""

    @property
    def models(self) -> tuple[str, ...]:
        return tuple(m.strip() for m in self.allowed_models.split(",") if m.strip())

    @property
    def max_prompt_chars(self) -> int:
        """The assembled prompt's length bound, checked before it is built."""
        return self.max_prompt_tokens * self.prompt_chars_per_token


@dataclass(frozen=True)
class QueueSettings:
    capacity: int = 64
    """Queued plus running diagnoses above which new work is refused with 503."""
    cost_capacity: int = 1_000_000
    """Tokens that queued plus running diagnoses may generate at most together (each counted
    at its cost, :func:`api.services.admission.job_cost`); above it new work is refused with 503."""
    key_share: float = 0.5
    """The fraction of ``capacity`` and of ``cost_capacity`` one API key's queued and running
    work may hold; past it that key gets 429 with ``Retry-After``, so the rest stays free for
    other keys. 1.0: no per-key share. Work of a keyless service and scheduled runs has none."""
    tokens_per_s: float = 8.0
    """The decode rate (tokens per second, all rows of a batch together) assumed until one is
    measured from finished diagnoses: deliberately slow, so that a fresh service refuses (413)
    up front a diagnosis that could not finish within ``job_timeout_s`` rather than admit it
    to fail at the limit. Must be above 0."""
    retry_after_s: int = 30
    """What ``Retry-After`` says when the job queue could not take a job that was admitted. A full
    queue's (on submission and ``/healthz``) is computed from the work ahead and the rate
    (:meth:`api.services.admission.Admission.retry_after_for`); with no worker alive ``/healthz``
    says ``stalled_after_s``."""
    inline_inputs_max_documents: int = 50
    """``mode=inputs`` diagnoses of up to this many documents are answered inline."""
    inline_concurrency: int = 2
    """Inline diagnoses one API process runs or lets wait for its engine at once; beyond them a
    request gets 503 with ``Retry-After`` at once, instead of holding a request thread that
    other requests (``/healthz`` included) need."""
    inline_retry_after_s: int = 2
    """What ``Retry-After`` says when the inline diagnoses are all busy."""
    embedded_worker: bool = True
    """With SQLite, run the worker inside ``diagnose serve`` (there is no other process)."""
    heartbeat_s: float = 5.0
    """PostgreSQL workers: how often a worker says it is alive."""
    stalled_after_s: float = 30.0
    """PostgreSQL workers: a job whose worker was silent this long is run again (every live
    worker looks for such jobs each ``heartbeat_s``, whatever it is running); /healthz counts
    only workers heard from within this time."""
    max_attempts: int = 3
    """Deliveries of one diagnosis whose worker died, crashed or froze before it is marked
    failed instead of being run again: a case that kills every worker stops after this many."""
    job_timeout_s: float = 1800.0
    """Wall-clock limit of one attempt of a diagnosis (models already loaded); past it the
    diagnosis is failed at its next progress report. A PostgreSQL worker whose job is still
    running ``stalled_after_s`` after that (stuck without reporting) exits, so that its
    supervisor restarts it and the job counts an attempt. 0: no limit."""
    nightly_cron: str = ""
    """PostgreSQL workers: start a nightly run over the stored library on this cron
    (e.g. ``0 3 * * *``, UTC); empty means no scheduled run."""
    nightly_tags: str = ""
    """Comma-separated tags the scheduled run selects (every one required); empty: all cases."""


@dataclass(frozen=True)
class AuthSettings:
    default_rate_limit: str = "120/minute"
    """Per API key (or per client address when no keys exist), in ``limits`` notation."""
    failed_auth_limit: str = "10/minute"
    """Failed authentications (a wrong, revoked or non-bearer key, on the API or the
    login form) per client address; past it the address gets 429 with ``Retry-After``
    whatever it sends, a right key included, until the window has room. Empty: no limit."""
    session_ttl_s: int = 12 * 3600
    """How long a sign-in to the pages lasts (its cookie holds a server-side session token)."""
    header_timeout_s: float = 10.0
    """A connection whose request line and headers are not all in within this is closed
    (slowloris); 0: no limit."""
    body_timeout_s: float = 30.0
    """A request body (authenticated or not) not all in within this after its headers is answered
    408 (problem+json naming ``body``) and its connection closed: a body trickled a byte at a time
    must not hold it open. 0: no limit (applies
    only with ``header_timeout_s`` above 0)."""
    forwarded_allow_ips: str = ""
    """Comma-separated addresses of the reverse proxies whose ``X-Forwarded-For`` and
    ``X-Forwarded-Proto`` are believed (``*``: any). Empty, the default: none, so a client
    cannot choose the address its failed keys and rate limits count against."""


@dataclass(frozen=True)
class DatabaseTimeouts:
    """How long the service waits for its database before answering 503: a database that
    accepts connections and never answers must not hold every request."""

    db_connect_timeout_s: int = 3
    """Opening a PostgreSQL connection, its start-up exchange included (libpq's minimum is 2)."""
    db_statement_timeout_s: float = 15.0
    """One PostgreSQL statement (``statement_timeout``), lock waits included; 0: none."""
    db_idle_transaction_timeout_s: float = 30.0
    """A transaction left open this long between statements is ended by the server
    (``idle_in_transaction_session_timeout``), releasing its row locks: a worker that froze
    mid-transaction (stopped, swapped out, hung in native code) must not block the worker
    that takes its job over. Every transaction here is a few statements long; 0: none."""
    db_pool_timeout_s: float = 3.0
    """Waiting for a free pooled connection when all are in use."""
    db_tcp_timeout_s: int = 5
    """A PostgreSQL connection whose sent data stays unacknowledged (a server or network gone)
    this long is dropped (TCP keepalives and ``tcp_user_timeout``), so that the first request
    after an outage does not wait for the operating system's default of minutes."""
    db_busy_timeout_s: float = 2.0
    """SQLite: waiting for another writer's lock (the embedded worker's, another request's);
    past it the request gets 503 with ``Retry-After`` (the worker's writes retry). Reads do
    not take the lock (WAL)."""
    db_request_deadline_s: float = 5.0
    """A read-only request on the database (``GET`` of ``/v1`` diagnoses, nightly runs and the
    library, and the pages) not answered within this gets 503 with ``Retry-After`` instead of
    waiting on; 0: no deadline."""


@dataclass(frozen=True)
class ServiceSettings:
    engine: Settings = field(default_factory=Settings)
    limits: Limits = field(default_factory=Limits)
    queue: QueueSettings = field(default_factory=QueueSettings)
    auth: AuthSettings = field(default_factory=AuthSettings)
    database: DatabaseTimeouts = field(default_factory=DatabaseTimeouts)

    @property
    def database_url(self) -> str:
        return self.engine.database.url

    @property
    def uses_postgres(self) -> bool:
        return self.database_url.startswith("postgresql")

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> "ServiceSettings":
        """Engine settings plus ``RAG_DIAGNOSE_<FIELD>`` for every limit and queue knob,
        e.g. ``RAG_DIAGNOSE_MAX_DOCUMENTS=50`` or ``RAG_DIAGNOSE_CAPACITY=8``."""
        env = dict(os.environ if environ is None else environ)
        return cls(
            engine=Settings.from_env(env),
            limits=_override(Limits(), env),
            queue=_override(QueueSettings(), env),
            auth=_override(AuthSettings(), env),
            database=_override(DatabaseTimeouts(), env),
        )


def _override(group, env: dict[str, str]):
    changes = {}
    for f in fields(group):
        raw = env.get(f"RAG_DIAGNOSE_{f.name.upper()}")
        if raw is None:
            continue
        kind = type(getattr(group, f.name))
        parse = (lambda text: text.lower() in ("1", "true", "yes")) if kind is bool else kind
        changes[f.name] = env_value(env, f"RAG_DIAGNOSE_{f.name.upper()}", parse, f"a {kind.__name__}")
    return replace(group, **changes)
