"""One Settings object, built once at the edge (CLI or ``create_app``) and passed down.

Only :meth:`Settings.from_env` reads the engine's configuration variables
(``RAG_DIAGNOSE_*``, ``DATABASE_URL``); the one secret, the ``--server`` key, is
read by :func:`openai_api_key`, and ``XDG_CACHE_HOME`` only places the default
cache directory. Each group is a frozen dataclass defined beside the code that
reads it (``inputs``, ``sampling``, ``triage``); engine modules receive the group
they need, as keyword arguments whose defaults are the group's defaults.

Importing this module is cheap: the groups' modules import nothing but
dataclasses, and the packages they sit in load their stages lazily, so building
settings (or a usage error) never loads numpy, faiss, torch or transformers.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from diagnose.errors import SettingError
from diagnose.inputs.settings import InputSettings
from diagnose.nightly.settings import GateSettings
from diagnose.sampling.settings import SamplingSettings
from diagnose.triage.thresholds import TriageThresholds

T = TypeVar("T")


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
    """torch intra-op threads for every command that runs a model (`inputs`, `run`, `nightly`, `bench`,
    `serve`, `worker`; `check-engine` uses 1 unless set); 0 leaves torch's own choice (one per core). A
    change of it between runs is `info` only (it reorders float sums). On cores that other work
    shares, 1 can be several times faster: each operation of a multi-threaded torch waits for a busy
    core (one `run` of the embedded model on a loaded 2-core machine: 565 s with 2 threads, 77 s with 1,
    the same samples)."""
    reader: str | None = None
    """Who reads the documents when neither the command line nor the case says
    (:mod:`diagnose.reader.choose`); None: the reference reader when installed, else static."""
    reader_model: str = "reader"
    """The model name sent to a reader server (``reader`` a URL)."""


@dataclass(frozen=True)
class DatabaseSettings:
    url: str = "sqlite:///rag-diagnose.db"
    """The service's database (``DATABASE_URL``): SQLite needs nothing else; PostgreSQL adds
    separate worker processes."""


@dataclass(frozen=True)
class ServerSettings:
    host: str = "127.0.0.1"
    port: int = 8000


@dataclass(frozen=True)
class Settings:
    models: ModelSettings = field(default_factory=ModelSettings)
    inputs: InputSettings = field(default_factory=InputSettings)
    sampling: SamplingSettings = field(default_factory=SamplingSettings)
    triage: TriageThresholds = field(default_factory=TriageThresholds)
    gate: GateSettings = field(default_factory=GateSettings)
    database: DatabaseSettings = field(default_factory=DatabaseSettings)
    server: ServerSettings = field(default_factory=ServerSettings)

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> "Settings":
        """Build settings from ``RAG_DIAGNOSE_*`` variables and ``DATABASE_URL``.

        A variable that is set but malformed raises :class:`SettingError` (a usage
        error, exit 2) naming the variable and the form it expects."""
        env = dict(os.environ if environ is None else environ)
        models = ModelSettings(**{
            name: value
            for name, variable, parse, expected in MODEL_VARIABLES
            if (value := env_value(env, variable, parse, expected)) is not None
        })
        url = env_value(env, "DATABASE_URL", _database_url, _DATABASE_URL_FORM)
        database = DatabaseSettings(url=url or DatabaseSettings.url)
        return cls(models=models, database=database)


OPENAI_API_KEY_VARIABLE = "DIAGNOSE_OPENAI_API_KEY"
"""The bearer key ``--server`` sends to an OpenAI-compatible server."""


def openai_api_key(environ: Mapping[str, str] | None = None) -> str | None:
    """The ``--server`` bearer key (:data:`OPENAI_API_KEY_VARIABLE`), None when unset.

    The one place the secret is read, by the CLI when it builds a remote backend. It is
    no field of :class:`Settings`, which is passed around, logged and compared; nor does it
    go through :func:`env_value`, whose usage error quotes the raw value (any string is a
    key, so there is nothing to reject anyway)."""
    return (os.environ if environ is None else environ).get(OPENAI_API_KEY_VARIABLE)


def env_value(env: Mapping[str, str], variable: str, parse: Callable[[str], T], expected: str) -> T | None:
    """``parse(env[variable])``, None when the variable is unset.

    ``parse`` raises ValueError (or TypeError) on a malformed value; that becomes a
    :class:`SettingError` naming ``variable`` and ``expected`` (the accepted form).
    Every variable :meth:`Settings.from_env` reads goes through here.
    """
    raw = env.get(variable)
    if raw is None:
        return None
    try:
        return parse(raw)
    except (ValueError, TypeError):
        raise SettingError(variable, expected, raw) from None


def _non_negative_int(raw: str) -> int:
    value = int(raw.strip())
    if value < 0:
        raise ValueError(raw)
    return value


def _one_of_pattern(pattern: str) -> Callable[[str], str]:
    compiled = re.compile(pattern)

    def parse(raw: str) -> str:
        value = raw.strip()
        if not compiled.fullmatch(value):
            raise ValueError(raw)
        return value

    return parse


def _directory(raw: str) -> Path:
    if not raw.strip():
        raise ValueError(raw)
    return Path(raw).expanduser()


_database_url = _one_of_pattern(r"(sqlite|postgresql)(\+\w+)?://.*")
_DATABASE_URL_FORM = "sqlite:///PATH or postgresql://USER@HOST:PORT/DB"

#: (ModelSettings field, variable, parser, the expected form as the error states it)
MODEL_VARIABLES: tuple[tuple[str, str, Callable[[str], Any], str], ...] = (
    ("cache_dir", "RAG_DIAGNOSE_CACHE_DIR", _directory, "a directory path"),
    ("device", "RAG_DIAGNOSE_DEVICE", _one_of_pattern(r"auto|cpu|mps|cuda(:\d+)?"),
     "auto, cpu, mps, cuda or cuda:N"),
    ("dtype", "RAG_DIAGNOSE_DTYPE", _one_of_pattern(r"auto|float32|bfloat16|float16"),
     "auto, float32, bfloat16 or float16"),
    ("threads", "RAG_DIAGNOSE_THREADS", _non_negative_int,
     "a whole number of threads, 0 or more (0: torch's own choice)"),
    ("reader", "RAG_DIAGNOSE_READER", _one_of_pattern(r"static|reference|sampled|https?://\S+"),
     "static, reference, sampled or an http(s) URL of an OpenAI-compatible server"),
    ("reader_model", "RAG_DIAGNOSE_READER_MODEL", _one_of_pattern(r"\S+"), "a model name"),
)
