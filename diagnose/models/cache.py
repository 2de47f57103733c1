"""The conversion caches under ``RAG_DIAGNOSE_CACHE_DIR``.

Loading a GGUF through transformers de-quantizes it (about 30 s on 2 cores). The first
load therefore writes a safetensors cache keyed by the GGUF's content hash; later loads
read that cache in well under a second. Counting tokens needs only the tokenizer and the
context window: those are read from the GGUF's metadata without touching its weights, and
cached in a small tokenizer directory keyed by the same hash (the converted model cache
serves as well once it exists). Every cache is written to a temp directory and renamed
into place, so an interrupted write leaves nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

from diagnose.models.gguf import gguf_context_length
from diagnose.models.sources import ModelSource, file_sha256

Notify = Callable[[str], None]

def _model_cache_dir(source: ModelSource, cache_root: Path, digest: str) -> Path:
    return cache_root / "models" / f"{Path(source.gguf_file or '').stem}-{digest[:16]}"


def gguf_tokenizer_dir(
    source: ModelSource, cache_root: Path, notify: Notify, sha256: Callable[[Path], str] = file_sha256
) -> tuple[Path, int | None]:
    """A directory to load a GGUF model's tokenizer from, without converting its weights.

    Returns (directory, context window): the converted model cache when it exists
    (context window None: read its config.json), else a tokenizer-only cache built
    once from the GGUF's metadata (the tokenizer transformers derives from the GGUF,
    as the model cache holds it, and the context length), written to a temp
    directory and renamed into place.
    """
    from transformers import AutoTokenizer

    digest = sha256(source.path)
    model_cache = _model_cache_dir(source, cache_root, digest)
    if (model_cache / "config.json").is_file():
        return model_cache, None
    target = cache_root / "tokenizers" / model_cache.name
    meta = target / _COUNTER_FILE
    if meta.is_file() and (target / "tokenizer_config.json").is_file():
        return target, int(json.loads(meta.read_text(encoding="utf-8"))["context_window"])
    notify(f"reading the tokenizer of {source.gguf_file} (first run only)")
    window = gguf_context_length(source.path)
    with _staged_cache(target, ".tokenizer-") as staging:
        tokenizer = AutoTokenizer.from_pretrained(source.directory, gguf_file=source.gguf_file, local_files_only=True)
        if window is None:  # metadata without a context length: let transformers read the config
            from transformers import AutoConfig

            config = AutoConfig.from_pretrained(source.directory, gguf_file=source.gguf_file, local_files_only=True)
            window = int(getattr(config, "max_position_embeddings", 0) or 0)
        tokenizer.save_pretrained(staging)
        (staging / _COUNTER_FILE).write_text(
            json.dumps({"context_window": window, "source": str(source.path), "sha256": digest}), encoding="utf-8"
        )
    return target, window


_COUNTER_FILE = "counter.json"


@contextmanager
def _staged_cache(target: Path, prefix: str) -> Iterator[Path]:
    """A temp directory beside ``target``, renamed into place when the block ends well.

    An interrupted write leaves nothing; a half-written ``target`` from an older
    version is replaced. The GGUF converter's own tqdm bar is silenced meanwhile (it
    would garble ours; transformers' switch does not reach it).
    """
    from functools import partial

    import transformers.modeling_gguf_pytorch_utils as converter

    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=prefix, dir=target.parent))
    try:
        with mock.patch.object(converter, "tqdm", partial(converter.tqdm, disable=True)):
            yield staging
        if target.exists():
            shutil.rmtree(target, ignore_errors=True)
        os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


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
    target = _model_cache_dir(source, cache_root, digest)
    if (target / "config.json").is_file():
        return target, 0.0
    notify(f"converting {source.gguf_file} to a safetensors cache (first run only, ~30 s)")
    started = time.perf_counter()
    with _staged_cache(target, ".convert-") as staging:
        tokenizer = AutoTokenizer.from_pretrained(source.directory, gguf_file=source.gguf_file, local_files_only=True)
        loaded = AutoModelForCausalLM.from_pretrained(source.directory, gguf_file=source.gguf_file, local_files_only=True)
        rebuilt = AutoModelForCausalLM.from_config(loaded.config)
        rebuilt.load_state_dict(loaded.state_dict())
        rebuilt.generation_config = loaded.generation_config
        rebuilt.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        (staging / "SOURCE").write_text(f"{source.path}\nsha256={digest}\n", encoding="utf-8")
    return target, time.perf_counter() - started
