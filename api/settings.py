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
    max_documents: int = 200
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
    retry_after_s: int = 30
    """What ``Retry-After`` says when the queue is full."""
    inline_inputs_max_documents: int = 50
    """``mode=inputs`` diagnoses of up to this many documents are answered inline."""
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


@dataclass(frozen=True)
class ServiceSettings:
    engine: Settings = field(default_factory=Settings)
    limits: Limits = field(default_factory=Limits)
    queue: QueueSettings = field(default_factory=QueueSettings)
    auth: AuthSettings = field(default_factory=AuthSettings)

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
