"""What the input stage hands to the later stages.

:class:`InputAnalysis` is the hand-off: the input stage
(:func:`diagnose.inputs.analyze_inputs`) builds it, the sampling stage, the
ablation and the repair runner read it. It lives below all of them so that a
reader of the analysis need not import the stage that makes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from diagnose.report import InputReport

__all__ = ["InputAnalysis", "Projection"]


class Projection(Protocol):
    """The document map's 2-D frame (:class:`diagnose.inputs.layout.Projection` is the one
    the input stage fits), reusable for other texts embedded by the same embedder."""

    def __call__(self, emb: np.ndarray) -> np.ndarray:
        """Project ``(n, d)`` L2-normalised embeddings to ``(n, 2)`` float32."""
        ...


@dataclass
class InputAnalysis:
    """What the input stage hands to the later stages."""

    report: InputReport
    doc_embeddings: np.ndarray
    """``(n_docs, d)`` float32, L2-normalised, in case order."""
    question_embedding: np.ndarray
    """``(d,)`` float32, L2-normalised."""
    center_answers: dict[str, list[str]] = field(default_factory=dict)
    """Per center id, the answer texts that characterise it (values as written, claims)."""
    projection: Projection | None = None
    """The document map's frame, to place sampled outputs among the documents (None under 2 documents)."""
    claim_embeddings: np.ndarray | None = None
    """``(n_docs, d)`` float32: each document's best claim sentence (zero rows for none)."""
