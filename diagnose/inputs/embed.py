"""Kept for existing imports: the embedder lives in :mod:`diagnose.embedding`.

The input stage, the sampling stage and the model registry all use it, so it sits
below them; import it from :mod:`diagnose.embedding` in new code.
"""

from diagnose.embedding import CachedEmbedder, Embedder, l2_normalise

__all__ = ["CachedEmbedder", "Embedder", "l2_normalise"]
