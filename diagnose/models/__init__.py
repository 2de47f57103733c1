"""Models: where their files are (:mod:`.sources`), the GGUF header (:mod:`.gguf`), the
conversion caches (:mod:`.cache`) and the registry that loads them (:mod:`.registry`).

Nothing here reaches a model hub: every load names local files (``local_files_only``, or
a GGUF file in a local directory), and nothing here writes the process environment.
"""

from diagnose.models.cache import gguf_tokenizer_dir, materialize_gguf
from diagnose.models.gguf import gguf_context_length, gguf_quantization
from diagnose.models.registry import ModelRegistry
from diagnose.models.sources import (DEFAULT_GGUF, ModelSource, content_hash, file_sha256, pick_device, pick_dtype,
                                     resolve_generator)

__all__ = [
    "DEFAULT_GGUF", "ModelRegistry", "ModelSource", "content_hash", "file_sha256", "gguf_context_length",
    "gguf_quantization", "gguf_tokenizer_dir", "materialize_gguf", "pick_device", "pick_dtype", "resolve_generator",
]
