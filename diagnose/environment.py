"""The environment fingerprint written into every report."""

from __future__ import annotations

import functools
import platform
import sys
from importlib import metadata
from typing import Any

LIBRARIES = (
    "torch", "transformers", "sentence-transformers", "faiss-cpu", "faiss-gpu-cu12",
    "numpy", "tokenizers", "msgspec", "rag-diagnose",
)


FINGERPRINT_KEYS = ("model_id", "model_hash", "quantization", "dtype", "device", "backend", "threads", "cuda")
"""Fingerprint keys whose change can shift token probabilities on its own."""

SUMMATION_ORDER_KEYS = ("threads",)
"""Fingerprint keys whose change only reorders floating-point sums: another thread count splits
each reduction differently, so logits can differ in their last bits (enough to flip a near-tie),
while the model, its weights and its arithmetic stay the same. Such a change alone is ``info``."""

SUMMATION_ORDER_NOTE = ("A thread count changes the order of floating-point sums, so probabilities can "
                        "differ in their last bits and flip a near-tied token; the model and its "
                        "arithmetic are the same.")
"""What a change of a :data:`SUMMATION_ORDER_KEYS` key means, for findings and the nightly gate."""


def only_summation_order(diff: dict[str, Any]) -> bool:
    """Whether every key of a :func:`fingerprint_diff` only reorders float sums (and there is one)."""
    return bool(diff) and all(key in SUMMATION_ORDER_KEYS for key in diff)


def fingerprint_diff(baseline: dict[str, Any], current: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """``{key: (baseline value, current value)}`` for each differing fingerprint key and
    library version (``libraries.<name>``); empty when the fingerprints agree."""
    diff = {key: (baseline.get(key), current.get(key))
            for key in FINGERPRINT_KEYS if baseline.get(key) != current.get(key)}
    before, now = baseline.get("libraries") or {}, current.get("libraries") or {}
    for name in sorted(set(before) | set(now)):
        if before.get(name) != now.get(name):
            diff[f"libraries.{name}"] = (before.get(name), now.get(name))
    return diff


@functools.cache
def _installed_versions() -> tuple[tuple[str, str], ...]:
    """Read once per process: the metadata lookups cost ~16 ms, and every report asks."""
    versions = []
    for name in LIBRARIES:
        try:
            versions.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            continue
    return tuple(versions)


def library_versions() -> dict[str, str]:
    return dict(_installed_versions())


def fingerprint(
    generator: dict[str, Any] | None, embedder: dict[str, Any], backend: str | None
) -> dict[str, Any]:
    """Flat facts about where the diagnosis ran; ``generator`` is None for inputs-only runs."""
    import torch

    env: dict[str, Any] = {
        "backend": backend,
        "model_id": None,
        "model_hash": None,
        "revision": None,
        "quantization": None,
        "dtype": None,
        "device": None,
    }
    if generator:
        env.update(
            model_id=generator.get("id"),
            model_hash=generator.get("sha256"),
            revision=generator.get("revision") or generator.get("format"),
            quantization=generator.get("quantization"),
            dtype=generator.get("dtype"),
            device=generator.get("device"),
            model_path=generator.get("path"),
        )
        if generator.get("attention"):
            env["attention"] = generator["attention"]  # {path, reason} (contract section 7)
        if generator.get("batch_invariance"):
            env["batch_invariance"] = generator["batch_invariance"]  # {mode, reason}
    env.update(
        embedder=embedder.get("id"),
        embedder_hash=embedder.get("sha256"),
        threads=torch.get_num_threads(),
        cuda=torch.version.cuda if torch.cuda.is_available() else None,
        python=sys.version.split()[0],
        platform=platform.platform(),
        machine=platform.machine(),
        libraries=library_versions(),
    )
    return env
