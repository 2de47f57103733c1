"""Model resolution: embedded default, local paths only, never a hub download."""

from __future__ import annotations

from pathlib import Path

import pytest

from diagnose.case import SamplingSpec
from diagnose.errors import CaseError
from diagnose.models import DEFAULT_GGUF, ModelRegistry, materialize_gguf, resolve_generator
from diagnose.sampling.engine import decode_rows, rows_for
from diagnose.settings import ModelSettings


@pytest.mark.parametrize("name", ["HuggingFaceTB/SmolLM2-135M-Instruct", "gpt2", "/no/such/dir"])
def test_unknown_model_names_are_case_errors_not_downloads(name):
    with pytest.raises(CaseError) as info:
        resolve_generator(name)
    assert info.value.field == "model" and info.value.exit_code == 2


def test_default_and_explicit_gguf_path_resolve_to_the_same_file():
    default = resolve_generator("default")
    assert default.gguf_file == DEFAULT_GGUF and default.path.is_file()
    explicit = resolve_generator(str(default.path))
    assert explicit.path == default.path and explicit.gguf_file == DEFAULT_GGUF


def test_a_directory_without_config_is_rejected(tmp_path: Path):
    with pytest.raises(CaseError):
        resolve_generator(str(tmp_path))


@pytest.mark.models
def test_gguf_cache_is_reused_and_loads_as_a_model_directory(tmp_path: Path):
    settings = ModelSettings(cache_dir=Path.home() / ".cache" / "rag-diagnose")
    source = resolve_generator("default")
    directory, _ = materialize_gguf(source, settings.cache_dir, lambda m: None)
    again, seconds = materialize_gguf(source, settings.cache_dir, lambda m: None)
    assert again == directory and seconds == 0.0
    assert (directory / "model.safetensors").is_file()

    # The converted directory is an ordinary Hugging Face model directory: `model:` accepts it.
    registry = ModelRegistry(settings)
    from_dir = registry.generator(str(directory))
    from_gguf = registry.generator("default")
    assert from_dir.identity["format"] == "transformers"
    assert from_gguf.identity["quantization"] == "Q4_1"
    spec = SamplingSpec(seeds=2, temperatures=[0.0, 0.8], max_new_tokens=8)
    prompt = from_gguf.chat_ids([{"role": "user", "content": "Name a colour."}])
    tokens = lambda backend: [t.tokens for t in decode_rows(backend, prompt, rows_for(spec), spec)]
    assert tokens(from_dir) == tokens(from_gguf)


def test_registry_hashes_each_file_once_while_it_is_unchanged(tmp_path: Path, monkeypatch):
    import diagnose.models as models

    calls: list[Path] = []
    real = models.file_sha256
    monkeypatch.setattr(models, "file_sha256", lambda path: (calls.append(path), real(path))[1])
    weights = tmp_path / "w.bin"
    weights.write_bytes(b"abc")
    registry = ModelRegistry(ModelSettings(cache_dir=tmp_path))
    assert registry._sha256(weights) == registry._sha256(weights) == real(weights)
    assert calls == [weights]
    weights.write_bytes(b"abcd")  # changed size: hashed again
    assert registry._sha256(weights) == real(weights)
    assert calls == [weights, weights]
