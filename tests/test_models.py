"""Model resolution: embedded default, local paths only, never a hub download."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from diagnose.case import SamplingSpec
from diagnose.errors import CaseError
from diagnose.models import DEFAULT_GGUF, ModelRegistry, materialize_gguf, resolve_generator
from diagnose.decode.engine import decode_rows, rows_for
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
    import diagnose.models.registry as models

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


# --- token counting reads the tokenizer only (no weight conversion) ---------------------------


def _gguf_string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def write_gguf_header(path: Path, entries: list[tuple[str, int, bytes]], version: int = 3) -> Path:
    """A GGUF file holding only metadata: (key, value type, packed value) entries."""
    body = b"".join(_gguf_string(key) + struct.pack("<I", kind) + value for key, kind, value in entries)
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", version, 0, len(entries)) + body)
    return path


def _string_array(items: list[str]) -> bytes:
    return struct.pack("<IQ", 8, len(items)) + b"".join(_gguf_string(i) for i in items)


def test_context_length_is_read_from_the_gguf_header(tmp_path: Path):
    from diagnose.models import gguf_context_length

    entries = [
        ("general.name", 8, _gguf_string("tiny")),
        ("tokenizer.ggml.tokens", 9, _string_array(["a", "b", "cc"])),  # skipped on the way
        ("general.alignment", 4, struct.pack("<I", 32)),
        ("qwen2.context_length", 4, struct.pack("<I", 999)),  # another architecture's key
        ("general.architecture", 8, _gguf_string("llama")),
        ("tokenizer.ggml.scores", 9, struct.pack("<IQ", 6, 2) + struct.pack("<ff", 0.5, 1.5)),
        ("llama.context_length", 10, struct.pack("<Q", 4096)),
    ]
    assert gguf_context_length(write_gguf_header(tmp_path / "m.gguf", entries)) == 4096
    assert gguf_context_length(write_gguf_header(tmp_path / "none.gguf", entries[:5])) is None
    assert gguf_context_length(write_gguf_header(tmp_path / "v1.gguf", entries, version=1)) is None
    (tmp_path / "junk.gguf").write_bytes(b"not a gguf at all")
    assert gguf_context_length(tmp_path / "junk.gguf") is None
    (tmp_path / "cut.gguf").write_bytes((tmp_path / "m.gguf").read_bytes()[:40])
    assert gguf_context_length(tmp_path / "cut.gguf") is None


def test_the_embedded_gguf_header_gives_its_context_window():
    from diagnose.models import gguf_context_length

    assert gguf_context_length(resolve_generator("default").path) == 8192  # SmolLM2: 8k positions


class _StubTokenizer:
    chat_template = None

    def save_pretrained(self, directory) -> None:
        (Path(directory) / "tokenizer_config.json").write_text("{}", encoding="utf-8")


def test_prompt_counter_of_a_gguf_never_converts_the_weights(tmp_path: Path, monkeypatch):
    """`diagnose inputs` counts tokens: it must not pay for converting the generator (~30 s)."""
    import transformers

    import diagnose.models.registry as models

    gguf = write_gguf_header(tmp_path / "tiny.Q4_0.gguf", [
        ("general.architecture", 8, _gguf_string("llama")), ("llama.context_length", 4, struct.pack("<I", 2048))])
    monkeypatch.setattr(models, "materialize_gguf", lambda *a, **k: pytest.fail("converted the weights"))
    from_gguf: list[tuple] = []
    loaded: list[Path] = []

    def from_pretrained(directory, gguf_file=None, **kwargs):
        if gguf_file is not None:
            from_gguf.append((Path(directory), gguf_file))
        else:
            loaded.append(Path(directory))
        return _StubTokenizer()

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", from_pretrained)
    monkeypatch.setattr(transformers.AutoConfig, "from_pretrained",
                        lambda *a, **k: pytest.fail("the context length comes from the GGUF header"))
    notes: list[str] = []
    counter = ModelRegistry(ModelSettings(cache_dir=tmp_path / "cache"), notify=notes.append).prompt_counter(str(gguf))
    assert counter.context_window == 2048
    assert from_gguf == [(tmp_path, "tiny.Q4_0.gguf")] and len(notes) == 1
    cached = loaded[0]
    assert cached.parent == tmp_path / "cache" / "tokenizers" and (cached / "counter.json").is_file()

    # A new process: the tokenizer cache is read, the GGUF not parsed again.
    again = ModelRegistry(ModelSettings(cache_dir=tmp_path / "cache"), notify=notes.append).prompt_counter(str(gguf))
    assert again.context_window == 2048 and len(from_gguf) == 1 and loaded == [cached, cached]
    assert len(notes) == 1
    assert not (tmp_path / "cache" / "models").exists()


@pytest.mark.models
def test_the_embedded_generator_counts_tokens_as_its_converted_cache_does(tmp_path: Path):
    """The tokenizer-only cache and the converted model cache hold the same tokenizer."""
    fresh = ModelRegistry(ModelSettings(cache_dir=tmp_path)).prompt_counter("default")
    assert not (tmp_path / "models").exists()
    converted = ModelRegistry(ModelSettings(cache_dir=Path.home() / ".cache" / "rag-diagnose")).generator("default")
    messages = [{"role": "system", "content": "Answer only from the documents."},
                {"role": "user", "content": "When did it open? 1937 or 1952, ünïcode 数字"}]
    assert fresh.chat_ids(messages) == converted.counter.chat_ids(messages)
    assert fresh.context_window == converted.counter.context_window == 8192


def test_the_registry_leaves_the_environment_alone(tmp_path: Path, monkeypatch):
    """Offline is per call (local files only), not a variable the library sets behind the caller."""
    import os

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    before = dict(os.environ)
    registry = ModelRegistry(ModelSettings(cache_dir=tmp_path))
    registry.prompt_counter("default").count_tokens("How many tokens?")
    assert dict(os.environ) == before
