"""The embedding edge: one protocol, one cached sentence-transformers adapter.

Everything downstream works on the ``(n, d)`` float32 L2-normalised arrays that
:meth:`Embedder.encode` returns; only this module touches a model. It sits below
the stages (the input and sampling stages both encode, and the model registry
builds the :class:`CachedEmbedder`), so it imports no stage.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit vectors."""

    name: str
    """Model identity; part of every cache key."""

    def encode(self, texts: list[str]) -> np.ndarray:
        """Return ``(len(texts), d)`` float32 rows of L2 norm 1 (zero rows for empty text)."""
        ...


def l2_normalise(x: np.ndarray) -> np.ndarray:
    """Row-normalise ``(n, d)`` to unit length as contiguous float32; zero rows stay zero."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    if x.ndim != 2:
        raise ValueError(f"expected a (n, d) array, got shape {x.shape}")
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)


class CachedEmbedder:
    """Wrap a ``SentenceTransformer`` (anything with ``encode(list, batch_size=...)``).

    Vectors are cached by ``sha256(model name + text)`` in memory and, when
    ``cache_dir`` is given, as one ``.npy`` file per text under
    ``cache_dir/embeddings/<first two hex>/``, so a second run over the same
    documents does not call the model.
    """

    batch_size: int = 32
    """Texts per model call."""

    def __init__(self, model: Any, cache_dir: Path | None = None, name: str | None = None) -> None:
        self._model = model
        self.name = name or _model_name(model)
        self._dir = Path(cache_dir) / "embeddings" if cache_dir is not None else None
        self._memory: dict[str, np.ndarray] = {}
        self.embedded = 0
        """Texts sent to the model so far (cache misses)."""

    @property
    def model(self) -> Any:
        """The wrapped model (for timing it alone)."""
        return self._model

    def _key(self, text: str) -> str:
        return hashlib.sha256(f"{self.name}\x00{text}".encode("utf-8")).hexdigest()

    def _path(self, key: str) -> Path | None:
        return None if self._dir is None else self._dir / key[:2] / f"{key}.npy"

    def _lookup(self, key: str) -> np.ndarray | None:
        hit = self._memory.get(key)
        if hit is None:
            path = self._path(key)
            if path is not None and path.exists():
                hit = np.load(path)
                self._memory[key] = hit
        return hit

    def _store(self, key: str, vector: np.ndarray) -> None:
        self._memory[key] = vector
        path = self._path(key)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp.npy")
            np.save(tmp, vector)
            tmp.replace(path)

    def encode(self, texts: list[str]) -> np.ndarray:
        """Return ``(len(texts), d)`` float32 unit rows, embedding only uncached texts."""
        keys = [self._key(t) for t in texts]
        found = {k: v for k in dict.fromkeys(keys) if (v := self._lookup(k)) is not None}
        missing: dict[str, str] = {}
        for key, text in zip(keys, texts):
            if key not in found and key not in missing:
                missing[key] = text
        if missing:
            self.embedded += len(missing)
            vectors = self._model.encode(
                list(missing.values()), batch_size=self.batch_size,
                convert_to_numpy=True, show_progress_bar=False,
            )
            vectors = l2_normalise(np.asarray(vectors).reshape(len(missing), -1))
            for key, vector in zip(missing, vectors):
                self._store(key, vector)
                found[key] = vector
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.ascontiguousarray(np.stack([found[k] for k in keys]), dtype=np.float32)

    @property
    def dimension(self) -> int:
        getter = getattr(self._model, "get_embedding_dimension", None) or getattr(
            self._model, "get_sentence_embedding_dimension", None
        )
        dim = getter() if callable(getter) else None
        return int(dim) if dim else 0


def _model_name(model: Any) -> str:
    card = getattr(model, "model_card_data", None)
    name = getattr(card, "base_model", None) or getattr(model, "name_or_path", None)
    if not name:
        modules = getattr(model, "_modules", {}) or {}
        first = next(iter(modules.values()), None)
        auto = getattr(first, "auto_model", None)
        name = getattr(getattr(auto, "config", None), "_name_or_path", None)
    return str(name or type(model).__name__)
