"""The logits processors against Hugging Face's own classes on random inputs.

The module docstrings of :mod:`diagnose.decode.processors` claim HF semantics;
here each processor, and the whole pipeline in HF's ``generate`` order
(repetition penalty, then temperature, top-k, top-p), is run next to the
``transformers`` class on random logits and token histories. Kept sets must be
identical and kept values equal to float32 rounding.
"""

from __future__ import annotations

import pytest
import torch
from transformers import (
    LogitsProcessorList,
    RepetitionPenaltyLogitsProcessor,
    TemperatureLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
)

from diagnose.decode.processors import RepetitionPenalty, Temperature, TopK, TopP, build_pipeline

TRIALS = 200
BATCH, VOCAB, HISTORY = 4, 97, 12


def _random_inputs(generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Token histories ``[B, L]`` with repeats, and logits ``[B, V]`` of mixed sign and scale."""
    ids = torch.randint(0, VOCAB, (BATCH, HISTORY), generator=generator)
    scale = torch.rand(BATCH, 1, generator=generator) * 6 + 0.1
    logits = torch.randn(BATCH, VOCAB, generator=generator) * scale
    return ids, logits


def _assert_same(ours: torch.Tensor, theirs: torch.Tensor) -> None:
    kept_ours, kept_theirs = torch.isfinite(ours), torch.isfinite(theirs)
    assert torch.equal(kept_ours, kept_theirs), "kept token sets differ"
    torch.testing.assert_close(ours[kept_ours], theirs[kept_theirs].to(ours.dtype), rtol=1e-6, atol=1e-6)


def _trials(seed: int):
    generator = torch.Generator().manual_seed(seed)
    for _ in range(TRIALS):
        yield _random_inputs(generator)


@pytest.mark.parametrize("penalty", [0.7, 1.3, 2.0])
def test_repetition_penalty_matches_hf(penalty):
    ours, theirs = RepetitionPenalty(penalty), RepetitionPenaltyLogitsProcessor(penalty)
    for ids, logits in _trials(1):
        _assert_same(ours(ids, logits), theirs(ids, logits.clone()))


@pytest.mark.parametrize("temperature", [0.3, 0.7, 1.6])
def test_temperature_matches_hf(temperature):
    ours, theirs = Temperature(temperature), TemperatureLogitsWarper(temperature)
    for ids, logits in _trials(2):
        _assert_same(ours(ids, logits), theirs(ids, logits.clone()))


@pytest.mark.parametrize("k", [1, 5, 40, VOCAB + 3])
def test_top_k_matches_hf(k):
    ours, theirs = TopK(k), TopKLogitsWarper(k)
    for ids, logits in _trials(3):
        _assert_same(ours(ids, logits), theirs(ids, logits.clone()))


def test_top_k_keeps_ties_like_hf():
    logits = torch.tensor([[1.0, 3.0, 2.0, 2.0, 0.5]])
    ids = torch.zeros(1, 1, dtype=torch.long)
    _assert_same(TopK(2)(ids, logits), TopKLogitsWarper(2)(ids, logits.clone()))


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9, 0.99])
def test_top_p_matches_hf(p):
    ours, theirs = TopP(p), TopPLogitsWarper(p)
    for ids, logits in _trials(4):
        _assert_same(ours(ids, logits), theirs(ids, logits.clone()))


@pytest.mark.parametrize(
    ("temperature", "top_k", "top_p", "penalty"),
    [(0.7, 50, 0.9, 1.0), (1.2, 20, 0.8, 1.2), (0.4, 0, 0.95, 1.1), (1.0, 10, 1.0, 0.9)],
)
def test_pipeline_matches_hf_generate_order(temperature, top_k, top_p, penalty):
    ours = build_pipeline(temperature, top_k, top_p, penalty)
    # The order of transformers' GenerationMixin._get_logits_processor for these settings.
    theirs = LogitsProcessorList()
    if penalty != 1.0:
        theirs.append(RepetitionPenaltyLogitsProcessor(penalty))
    if temperature != 1.0:
        theirs.append(TemperatureLogitsWarper(temperature))
    if top_k:
        theirs.append(TopKLogitsWarper(top_k))
    if top_p < 1.0:
        theirs.append(TopPLogitsWarper(top_p))
    for ids, logits in _trials(5):
        _assert_same(ours(ids, logits), theirs(ids, logits.clone()))
