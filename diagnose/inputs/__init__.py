"""The input stage: gravity centers, noise and conflict among retrieved documents."""

from diagnose.inputs.embed import CachedEmbedder, Embedder
from diagnose.inputs.settings import InputSettings
from diagnose.inputs.stage import InputAnalysis, analyze_inputs

__all__ = ["CachedEmbedder", "Embedder", "InputAnalysis", "InputSettings", "analyze_inputs"]
