"""The input stage: gravity centers, noise and conflict among retrieved documents.

``analyze_inputs`` is loaded when first asked for: :mod:`diagnose.settings` imports
:mod:`diagnose.inputs.settings`, and that must not pull in the stage (faiss, the
text parsers). The hand-off types live below the stages, in :mod:`diagnose.analysis`
(``InputAnalysis``) and :mod:`diagnose.embedding` (``Embedder``, ``CachedEmbedder``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from diagnose._lazy import lazy_attributes
from diagnose.inputs.settings import InputSettings

if TYPE_CHECKING:
    from diagnose.inputs.stage import analyze_inputs

__all__ = ["InputSettings", "analyze_inputs"]

_LAZY = {"analyze_inputs": "diagnose.inputs.stage"}


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY)
