"""Shared-prefix batched decoding on the deterministic fake backend."""

from __future__ import annotations

import math

import pytest
import torch

from diagnose.case import SamplingSpec
from diagnose.decode.engine import Row, decode_rows, rows_for
from diagnose.decode.fake import FakeBackend

VOCAB = ["<eos>", "<unk>", "a", "b", "c", "d"]


def _logits(history: list[int]) -> list[float]:
    """End becomes likely after a few generated tokens; the rest is a fixed preference."""
    end = 3.0 if len(history) >= 6 else -20.0
    return [end, -20.0, 1.0, 0.9, 0.5, 0.1]


def _backend() -> FakeBackend:
    return FakeBackend(VOCAB, _logits)


SPEC = SamplingSpec(seeds=4, temperatures=[0.0, 0.7, 1.2], max_new_tokens=12, top_k=0, top_p=1.0)
PROMPT = [2, 3]


def test_one_prefill_serves_every_row():
    backend = _backend()
    traces = decode_rows(backend, PROMPT, rows_for(SPEC), SPEC)
    assert backend.prefills == 1
    assert len(traces) == 12
    assert [t.row for t in traces] == [Row(t, s) for t in (0.0, 0.7, 1.2) for s in range(4)]


def test_a_seed_gives_the_same_tokens_alone_and_in_any_batch():
    full = decode_rows(_backend(), PROMPT, rows_for(SPEC), SPEC)
    for trace in full:
        alone = decode_rows(_backend(), PROMPT, [trace.row], SPEC)[0]
        assert alone.tokens == trace.tokens
        assert alone.finish_reason == trace.finish_reason
    # Reversed batch order: still the same text per row.
    reversed_rows = list(reversed(rows_for(SPEC)))
    again = {t.row: t.tokens for t in decode_rows(_backend(), PROMPT, reversed_rows, SPEC)}
    assert again == {t.row: t.tokens for t in full}


def test_greedy_rows_agree_and_sampled_rows_differ():
    traces = decode_rows(_backend(), PROMPT, rows_for(SPEC), SPEC)
    greedy = {tuple(t.tokens) for t in traces if t.row.temperature == 0.0}
    assert greedy == {(2, 2, 2, 2)}  # argmax token "a" until the end token wins
    hot = {tuple(t.tokens) for t in traces if t.row.temperature == 1.2}
    assert len(hot) > 1


def test_finished_rows_stop_costing_work():
    def early_end_for_b(history: list[int]) -> list[float]:
        # A row that has produced "b" ends at once; others continue to max_new_tokens.
        end = 5.0 if history and history[-1] == 3 else -20.0
        return [end, -20.0, 1.0, 1.0, -20.0, -20.0]

    backend = FakeBackend(VOCAB, early_end_for_b)
    spec = SamplingSpec(seeds=8, temperatures=[1.0], max_new_tokens=10, top_k=0, top_p=1.0)
    traces = decode_rows(backend, [2], rows_for(spec), spec)
    rows_per_forward = backend.sessions[0].forward_rows
    assert rows_per_forward == sorted(rows_per_forward, reverse=True)
    live_after = [sum(1 for t in traces if len(t.steps) > k + 1) for k in range(len(rows_per_forward))]
    assert rows_per_forward == live_after


def test_finish_reasons_and_budget():
    traces = decode_rows(_backend(), PROMPT, rows_for(SPEC), SPEC)
    for t in traces:
        assert len(t.steps) <= SPEC.max_new_tokens
        if t.finish_reason == "stop":
            assert t.steps[-1].token == 0 and 0 not in t.tokens
            assert len(t.tokens) == len(t.steps) - 1
        else:
            assert len(t.tokens) == len(t.steps) == SPEC.max_new_tokens
    short = SamplingSpec(seeds=2, temperatures=[0.0], max_new_tokens=2, top_k=0, top_p=1.0)
    cut = decode_rows(_backend(), PROMPT, rows_for(short), short)
    assert [t.finish_reason for t in cut] == ["length", "length"]
    assert [len(t.tokens) for t in cut] == [2, 2]


def test_step_records_read_raw_and_processed_distributions():
    spec = SamplingSpec(seeds=1, temperatures=[0.5], max_new_tokens=1, top_k=0, top_p=1.0)
    step = decode_rows(_backend(), PROMPT, rows_for(spec), spec)[0].steps[0]
    raw = torch.log_softmax(torch.tensor(_logits(PROMPT)), dim=-1)
    assert step.raw_logprob == pytest.approx(float(raw[step.token]), abs=1e-6)
    assert step.top2_tokens == (2, 3)
    assert step.top2_probs[0] == pytest.approx(math.exp(float(raw[2])), abs=1e-6)
    processed = torch.softmax(torch.tensor(_logits(PROMPT)) / 0.5, dim=-1)
    expected_entropy = -sum(float(p) * math.log(float(p)) for p in processed if p > 0)
    assert step.entropy == pytest.approx(expected_entropy, abs=1e-5)


def test_generator_seed_depends_only_on_seed_and_temperature():
    assert Row(0.7, 3).generator_seed == Row(0.7, 3).generator_seed
    assert Row(0.7, 3).generator_seed != Row(0.7, 4).generator_seed
    assert Row(0.7, 3).generator_seed != Row(1.2, 3).generator_seed


def test_records_where_temperature_last_would_keep_other_candidates():
    # Vocabulary: eos, unk, a, b, c, d. Raw logits over a..d: 1.0, 0.9, 0.5, 0.1 (eos impossible).
    fixed = lambda history: [-30.0, -30.0, 1.0, 0.9, 0.5, 0.1]
    spec = SamplingSpec(seeds=1, temperatures=[0.3, 1.0], max_new_tokens=1, top_k=0, top_p=0.5)
    traces = decode_rows(FakeBackend(VOCAB, fixed), [2], rows_for(spec), spec)

    def kept(temperature: float) -> int:
        probs = torch.softmax(torch.tensor([1.0, 0.9, 0.5, 0.1]) / temperature, dim=-1)
        ranked = sorted(probs.tolist(), reverse=True)
        before = [sum(ranked[:i]) for i in range(len(ranked))]
        return sum(1 for b in before if b < 0.5)

    assert kept(0.3) != kept(1.0)  # the case is built so that the order matters
    by_temperature = {t.row.temperature: t.steps[0].temperature_last_differs for t in traces}
    assert by_temperature == {0.3: True, 1.0: False}


def test_raw_entropy_is_recorded_per_step():
    spec = SamplingSpec(seeds=1, temperatures=[0.5], max_new_tokens=1, top_k=0, top_p=1.0)
    step = decode_rows(_backend(), PROMPT, rows_for(spec), spec)[0].steps[0]
    raw = torch.softmax(torch.tensor(_logits(PROMPT)), dim=-1)
    expected = -sum(float(p) * math.log(float(p)) for p in raw if p > 0)
    assert step.raw_entropy == pytest.approx(expected, abs=1e-5)


def test_repetition_penalty_reads_prompt_and_generated_ids_each_step():
    """The running seen-token mask gives the tokens a per-step rebuild from the ids would."""
    from diagnose.decode.processors import build_pipeline

    spec = SamplingSpec(seeds=3, temperatures=[0.0, 0.9], max_new_tokens=8, top_k=0, top_p=1.0,
                        repetition_penalty=3.0)
    flat = lambda history: [-20.0, -20.0, 1.0, 0.95, 0.9, 0.85]  # noqa: E731 - never ends: budget-bound
    traces = decode_rows(FakeBackend(VOCAB, flat), PROMPT, rows_for(spec), spec)
    for trace in traces:
        pipeline = build_pipeline(trace.row.temperature, 0, 1.0, 3.0)
        generator = torch.Generator().manual_seed(trace.row.generator_seed)
        history, expected = list(PROMPT), []
        for _ in range(spec.max_new_tokens):
            processed = pipeline(torch.tensor([history]), torch.tensor([flat(history)]))
            token = int(pipeline.sample(processed, [generator])[0])
            expected.append(token)
            history.append(token)
        assert trace.tokens == expected
    greedy = [t.tokens for t in traces if t.row.temperature == 0.0][0]
    # By hand: a, b (ids 2, 3) are in the prompt, so 1.0/3 and 0.95/3; c (0.9) wins, then d
    # (0.85); then everything is penalised once and a (1.0/3) wins, again and again.
    assert greedy[:4] == [4, 5, 2, 2]
