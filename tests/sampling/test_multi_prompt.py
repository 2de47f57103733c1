"""Several prompts in one batch: every row as its prompt decoded alone (float32, same seeds)."""

from __future__ import annotations

import pytest
import torch

from diagnose.case import SamplingSpec
from diagnose.decode.conformance import TOLERANCE, WINDOW, _IdsOnly, compare, tiny_model
from diagnose.decode.engine import DecodeStats, Row, decode_rows, rows_for
from diagnose.decode.multi_prompt import PromptRows, batch_tokens, decode_prompts, kv_bytes_per_token, pack
from diagnose.decode.backend import TransformersBackend
from diagnose.decode.prompt_tree import branch_chunks, merge, root_length
from diagnose.decode.random_model import random_backend
from tests.fakes import SizedTokenizer

SPEC = SamplingSpec(seeds=2, temperatures=[0.0, 0.9], top_k=50, top_p=0.95, max_new_tokens=12)


def _tokens(seed: int, n: int) -> list[int]:
    return torch.randint(3, 250, (n,), generator=torch.Generator().manual_seed(seed)).tolist()


def _prompts() -> list[list[int]]:
    """A shared root (longer than the test windows), then branches of different lengths; one
    prompt repeats another and one is a prefix of another (the root then stops a token short)."""
    root = _tokens(0, 21)
    first = root + _tokens(1, 5)
    return [first, root + _tokens(2, 13), root + _tokens(3, 1), list(first), first[:-2]]


def _backend(family: str) -> TransformersBackend:
    backend = TransformersBackend(tiny_model(family, torch.float32, 0), _IdsOnly(), "cpu")
    backend.choose_attention()
    return backend


def _assert_alone(backend, prompts: list[list[int]], spec: SamplingSpec, rows: list[list[Row]], **kwargs) -> None:
    together = decode_prompts(backend, [PromptRows(p, r) for p, r in zip(prompts, rows)], spec, **kwargs)
    for prompt, prompt_rows, traces in zip(prompts, rows, together):
        alone = decode_rows(backend, prompt, prompt_rows, spec)
        assert [t.row for t in traces] == list(prompt_rows)
        same, worst = compare(traces, alone)
        assert same == len(prompt_rows) and worst <= TOLERANCE, (same, worst)


@pytest.mark.parametrize("even", [False, True], ids=["rows_per_prompt_differ", "rows_per_prompt_equal"])
@pytest.mark.parametrize("family", ["llama", "mistral", "gemma2", "qwen2"])
def test_each_row_is_its_prompt_decoded_alone(family, even):
    """mistral: sliding windows, measured from each row's own position; gemma2: softcapping
    and sliding layers alternating with full ones. Equal rows per prompt: the branches are
    attended in one padded product; otherwise prompt by prompt."""
    backend = _backend(family)
    assert backend.shared_prefix, backend.attention.reason
    if family == "mistral":
        assert backend.model.config.sliding_window == WINDOW
    prompts = _prompts()
    rows = [rows_for(SPEC)[: 2 if even else 1 + i] for i in range(len(prompts))]
    _assert_alone(backend, prompts, SPEC, rows)


def test_random_model_rows_with_a_repetition_penalty_and_stops():
    backend = random_backend("tiny", SizedTokenizer(), "cpu", torch.float32, seed=7)
    spec = SamplingSpec(seeds=3, temperatures=[0.0, 1.0], top_k=0, top_p=1.0, repetition_penalty=1.3,
                        max_new_tokens=16)
    prompts = [list(range(3, 40)) + _tokens(i, 4 + 3 * i) for i in range(3)]
    backend.eos_token_ids = frozenset({int(t) for t in _tokens(9, 40)})  # rows stop at different steps
    _assert_alone(backend, prompts, spec, [rows_for(spec)] * 3)


def test_prompts_without_a_common_prefix_share_the_passes():
    backend = _backend("llama")
    prompts = [_tokens(10 + i, 9 + i) for i in range(3)]
    assert root_length(prompts) == 0
    stats = DecodeStats()
    _assert_alone(backend, prompts, SPEC, [rows_for(SPEC)] * 3, stats=stats)
    assert stats.rows_per_pass[0] == 3 * len(rows_for(SPEC))  # one pass advances every prompt's rows


def test_a_memory_budget_splits_the_batch_and_stays_exact():
    backend = _backend("llama")
    prompts = _prompts()
    rows = [rows_for(SPEC)] * len(prompts)
    per_token = kv_bytes_per_token(backend.model)
    budget = batch_tokens([PromptRows(p, r) for p, r in zip(prompts[:2], rows)], SPEC.max_new_tokens)
    assert len(pack([PromptRows(p, r) for p, r in zip(prompts, rows)], SPEC.max_new_tokens, budget)) > 1
    stats = DecodeStats()
    _assert_alone(backend, prompts, SPEC, rows, stats=stats, budget_bytes=budget * per_token)
    assert max(stats.rows_per_pass) <= 2 * len(rows_for(SPEC))


def test_pack_keeps_order_and_gives_an_oversized_prompt_its_own_batch():
    rows = rows_for(SPEC)
    prompts = [PromptRows([1] * 10, rows), PromptRows([1] * 10 + [2], rows), PromptRows([5] * 200, rows)]
    assert pack(prompts, 4, 10_000) == [[0, 1, 2]]
    assert pack(prompts, 4, batch_tokens(prompts[:2], 4)) == [[0, 1], [2]]
    assert pack(prompts, 4, 1) == [[0], [1], [2]]
    # the root stops a token short of the shorter prompt: 9 shared, branches of 1 and 2
    assert batch_tokens(prompts[:2], 4) == 9 + (1 + 2) + 2 * len(rows) * 4 + 2 * 11


def test_a_refused_family_decodes_prompt_by_prompt():
    backend = _backend("bloom")
    assert not backend.shared_prefix
    prompts = _prompts()[:3]
    _assert_alone(backend, prompts, SPEC, [rows_for(SPEC)] * 3)


def test_prompts_without_rows_get_no_traces():
    backend = _backend("llama")
    prompts = _prompts()[:2]
    out = decode_prompts(backend, [PromptRows(prompts[0], []), PromptRows(prompts[1], rows_for(SPEC))], SPEC)
    assert out[0] == [] and len(out[1]) == len(rows_for(SPEC))


def test_branches_of_similar_length_prefill_together():
    assert branch_chunks([10, 9, 100, 1]) == [[2], [0, 1], [3]]
    assert branch_chunks([5, 5, 5]) == [[0, 1, 2]]
    assert branch_chunks([]) == []


def test_merge_equals_attention_over_both_blocks_and_ignores_an_empty_one():
    g = torch.Generator().manual_seed(0)
    scores, values = torch.randn(3, 7, generator=g), torch.randn(7, 4, generator=g)

    def block(cols):
        s = scores[:, cols]
        lse = torch.logsumexp(s, dim=-1, keepdim=True)
        return torch.softmax(s, dim=-1) @ values[cols], lse

    out, lse = merge(block(slice(0, 3)), block(slice(3, 7)))
    want_out, want_lse = block(slice(0, 7))
    assert torch.allclose(out, want_out, atol=1e-6) and torch.allclose(lse, want_lse, atol=1e-6)
    empty = (torch.zeros(3, 4), torch.full((3, 1), float("-inf")))
    out, lse = merge(empty, block(slice(0, 7)))
    assert torch.allclose(out, want_out, atol=1e-6)
    out, lse = merge(empty, empty)
    assert torch.equal(out, torch.zeros(3, 4)) and bool(torch.isneginf(lse).all())


def test_prompts_with_their_own_sampling_settings_share_a_batch():
    """Filters, penalty and token budget per prompt: each row as its prompt decoded alone with its settings."""
    backend = _backend("llama")
    prompts = _prompts()[:3]
    specs = [SPEC, SamplingSpec(seeds=2, temperatures=[0.9], top_k=0, top_p=1.0, repetition_penalty=1.3,
                                max_new_tokens=5),
             SamplingSpec(seeds=2, temperatures=[1.2], top_k=5, top_p=0.8, max_new_tokens=20)]
    stats = DecodeStats()
    together = decode_prompts(backend, [PromptRows(p, rows_for(s), s) for p, s in zip(prompts, specs)], SPEC,
                              stats=stats)
    assert stats.rows_per_pass[0] == sum(len(rows_for(s)) for s in specs)
    for prompt, spec, traces in zip(prompts, specs, together):
        alone = decode_rows(backend, prompt, rows_for(spec), spec)
        same, worst = compare(traces, alone)
        assert same == len(alone) and worst <= TOLERANCE, (same, worst)
        assert max(len(t.steps) for t in traces) == spec.max_new_tokens
