"""Reading a GGUF file's header without its weights: the context length and the
quantization tag, for counting tokens and for the report."""

from __future__ import annotations

import os
import struct
from pathlib import Path

# GGUF metadata value types (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md).
_GGUF_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_GGUF_STRING, _GGUF_ARRAY = 8, 9


def gguf_context_length(path: Path) -> int | None:
    """``<architecture>.context_length`` from a GGUF file's header, or None when absent.

    Reads the key/value metadata in order and stops as soon as both
    ``general.architecture`` and the context length are known (they come before
    the tokenizer's large arrays), so it touches a few hundred bytes, never the
    weights. Little-endian GGUF v2 and v3; anything else returns None.
    """
    try:
        with path.open("rb") as handle:
            if handle.read(4) != b"GGUF":
                return None
            (version,) = struct.unpack("<I", handle.read(4))
            if version not in (2, 3):
                return None
            _tensors, count = struct.unpack("<QQ", handle.read(16))
            architecture: str | None = None
            lengths: dict[str, int] = {}
            for _ in range(count):
                key = _gguf_string(handle)
                (kind,) = struct.unpack("<I", handle.read(4))
                if key == "general.architecture" and kind == _GGUF_STRING:
                    architecture = _gguf_string(handle)
                elif key.endswith(".context_length") and kind in _GGUF_SCALARS and kind not in (6, 7, 12):
                    fmt = "<" + _GGUF_SCALARS[kind]
                    (lengths[key.rsplit(".", 1)[0]],) = struct.unpack(fmt, handle.read(struct.calcsize(fmt)))
                else:
                    _gguf_skip(handle, kind)
                if architecture is not None and architecture in lengths:
                    return int(lengths[architecture])
    except (OSError, struct.error, UnicodeDecodeError, ValueError):
        return None
    return None


def _gguf_string(handle) -> str:
    (length,) = struct.unpack("<Q", handle.read(8))
    data = handle.read(length)
    if len(data) != length:
        raise ValueError("truncated GGUF string")
    return data.decode("utf-8")


def _gguf_skip(handle, kind: int) -> None:
    if kind in _GGUF_SCALARS:
        handle.seek(struct.calcsize("<" + _GGUF_SCALARS[kind]), os.SEEK_CUR)
    elif kind == _GGUF_STRING:
        (length,) = struct.unpack("<Q", handle.read(8))
        handle.seek(length, os.SEEK_CUR)
    elif kind == _GGUF_ARRAY:
        item, items = struct.unpack("<IQ", handle.read(12))
        if item in _GGUF_SCALARS:
            handle.seek(items * struct.calcsize("<" + _GGUF_SCALARS[item]), os.SEEK_CUR)
        else:
            for _ in range(items):
                _gguf_skip(handle, item)
    else:
        raise ValueError(f"unknown GGUF value type {kind}")


def gguf_quantization(gguf_file: str | None) -> str | None:
    """The quantization tag of a GGUF file name, e.g. ``Q4_1`` (dequantized on load)."""
    if not gguf_file:
        return None
    stem = Path(gguf_file).stem
    tag = stem.rsplit(".", 1)[-1]
    return tag if tag and tag[0] in "QFqf" else "unknown"
