"""Fakes shared by the unit tests of several stages."""

from __future__ import annotations

import numpy as np


class WordEmbedder:
    """Deterministic bag of words: each word is a fixed random vector; rows are unit length."""

    name = "words"

    def encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), 32), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                out[i] += np.random.default_rng(sum(map(ord, word)) * 7919 + len(word)).standard_normal(32)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)


class SizedTokenizer:
    """The few tokenizer facts a random-initialised model and the bench read (300 ids; no text)."""

    bos_token_id, eos_token_id, pad_token_id = 1, 2, None
    chat_template = None

    def __len__(self) -> int:
        return 300
