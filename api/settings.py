"""Service settings: limits, queue and auth knobs, read once from the environment.

The engine's :class:`diagnose.settings.Settings` carries models, database URL and
host/port; this adds what only the service needs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace

from diagnose.settings import Settings


@dataclass(frozen=True)
class Limits:
    """Request size limits; a case over any of them is refused with 413 or 422."""

    max_body_bytes: int = 2 * 1024 * 1024
    max_documents: int = 200
    max_prompt_tokens: int = 16_384
    """Tokens of the assembled prompt, counted with the case model's tokenizer."""
    max_samples: int = 256
    """Seeds × temperatures of one diagnosis."""
    max_new_tokens: int = 1024
    allowed_models: str = "default"
    """Comma-separated ``model`` values a request may name. A case file may name a local
    path; over the network that would let any client make the service load any file."""

    @property
    def models(self) -> tuple[str, ...]:
        return tuple(m.strip() for m in self.allowed_models.split(",") if m.strip())


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
    """PostgreSQL workers: a job whose worker was silent this long is run again."""
    nightly_cron: str = ""
    """PostgreSQL workers: start a nightly run over the stored library on this cron
    (e.g. ``0 3 * * *``, UTC); empty means no scheduled run."""
    nightly_tags: str = ""
    """Comma-separated tags the scheduled run selects (every one required); empty: all cases."""


@dataclass(frozen=True)
class AuthSettings:
    default_rate_limit: str = "120/minute"
    """Per API key (or per client address when no keys exist), in ``limits`` notation."""


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
        try:
            changes[f.name] = raw.lower() in ("1", "true", "yes") if kind is bool else kind(raw)
        except ValueError:
            raise ValueError(f"RAG_DIAGNOSE_{f.name.upper()}: expected {kind.__name__}, got {raw!r}") from None
    return replace(group, **changes)
