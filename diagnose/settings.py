"""One Settings object, built once at the edge (CLI or ``create_app``) and passed down.

Only :meth:`Settings.from_env` reads environment variables. Each group is a
frozen dataclass; engine modules receive the group they need.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from diagnose.inputs.settings import InputSettings
from diagnose.triage.thresholds import TriageThresholds


def _default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "rag-diagnose"


@dataclass(frozen=True)
class ModelSettings:
    cache_dir: Path = field(default_factory=_default_cache_dir)
    """Where converted model caches and embedding caches are kept."""
    device: str = "auto"
    """``auto`` picks CUDA when available, else CPU."""
    dtype: str = "auto"
    """``auto``: bfloat16 on CUDA, float32 on CPU."""
    embedder: str = "default"
    """``default`` is the embedded all-MiniLM-L6-v2; or a sentence-transformers directory."""
    threads: int = 0
    """torch intra-op threads; 0 leaves torch's own choice."""


@dataclass(frozen=True)
class DatabaseSettings:
    url: str = "sqlite:///rag-diagnose.db"


@dataclass(frozen=True)
class ServerSettings:
    host: str = "127.0.0.1"
    port: int = 8000


@dataclass(frozen=True)
class Settings:
    models: ModelSettings = field(default_factory=ModelSettings)
    inputs: InputSettings = field(default_factory=InputSettings)
    triage: TriageThresholds = field(default_factory=TriageThresholds)
    database: DatabaseSettings = field(default_factory=DatabaseSettings)
    server: ServerSettings = field(default_factory=ServerSettings)

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> "Settings":
        """Build settings from ``RAG_DIAGNOSE_*`` variables and ``DATABASE_URL``."""
        env = dict(os.environ if environ is None else environ)
        models = ModelSettings()
        if "RAG_DIAGNOSE_CACHE_DIR" in env:
            models = replace(models, cache_dir=Path(env["RAG_DIAGNOSE_CACHE_DIR"]))
        if "RAG_DIAGNOSE_DEVICE" in env:
            models = replace(models, device=env["RAG_DIAGNOSE_DEVICE"])
        if "RAG_DIAGNOSE_DTYPE" in env:
            models = replace(models, dtype=env["RAG_DIAGNOSE_DTYPE"])
        if "RAG_DIAGNOSE_THREADS" in env:
            models = replace(models, threads=int(env["RAG_DIAGNOSE_THREADS"]))
        database = DatabaseSettings(url=env.get("DATABASE_URL", DatabaseSettings.url))
        return cls(models=models, database=database)
