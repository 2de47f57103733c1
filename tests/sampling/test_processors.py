"""The logits pipeline: each processor alone on hand-made logits, then the whole."""

from __future__ import annotations

import math

import pytest
import torch
from scipy.stats import chisquare

from diagnose.errors import CaseError
from diagnose.decode.processors import (
    GREEDY_EPSILON,
    Pipeline,
    RepetitionPenalty,
    SeenTokens,
    Temperature,
    TopK,
    TopP,
    build_pipeline,
)

NEG_INF = float("-inf")


def _ids(*rows: list[int]) -> torch.Tensor:
    return torch.tensor(rows, dtype=torch.long)


def _logits(*rows: list[float]) -> torch.Tensor:
    return torch.tensor(rows, dtype=torch.float32)


def _softmax(values: list[float]) -> list[float]:
    """Reference softmax in plain Python (finite entries only)."""
    exps = [math.exp(v) for v in values]
    total = sum(exps)
    return [e / total for e in exps]


def _kept(out: torch.Tensor) -> list[bool]:
    return torch.isfinite(out[0]).tolist()


# --- each processor must leave its input alone -----------------------------------


@pytest.mark.parametrize(
    "processor",
    [RepetitionPenalty(1.5), Temperature(0.5), TopK(2), TopP(0.5)],
    ids=lambda p: type(p).__name__,
)
def test_processor_does_not_modify_input(processor):
    ids = _ids([0, 2])
    logits = _logits([2.0, -1.0, 0.5, 0.1])
    before = logits.clone()
    out = processor(ids, logits)
    assert torch.equal(logits, before)
    assert out.data_ptr() != logits.data_ptr()


# --- repetition penalty -----------------------------------------------------------


def test_repetition_penalty_sign_handling_and_once_per_id():
    ids = _ids([0, 1, 1, 1])  # token 1 appears three times: penalised once
    logits = _logits([2.0, -1.0, 0.5, 3.0])
    out = RepetitionPenalty(2.0)(ids, logits)
    assert out.tolist() == [[1.0, -2.0, 0.5, 3.0]]


def test_repetition_penalty_zero_logit_and_per_row_ids():
    ids = _ids([0, 3], [2, 2])
    logits = _logits([0.0, 1.0, 4.0, -4.0], [0.0, 1.0, 4.0, -4.0])
    out = RepetitionPenalty(4.0)(ids, logits)
    assert out.tolist() == [[0.0, 1.0, 4.0, -16.0], [0.0, 1.0, 1.0, -4.0]]


def test_repetition_penalty_ignores_negative_padding_ids():
    ids = _ids([1, -1, -1])
    out = RepetitionPenalty(2.0)(ids, _logits([1.0, 1.0, 1.0]))
    assert out.tolist() == [[1.0, 0.5, 1.0]]


def test_repetition_penalty_below_one_rewards_seen_tokens():
    out = RepetitionPenalty(0.5)(_ids([0, 1]), _logits([1.0, -1.0, 1.0]))
    assert out.tolist() == [[2.0, -0.5, 1.0]]


# --- temperature ------------------------------------------------------------------


def test_temperature_half_sharpens_distribution():
    out = Temperature(0.5)(_ids([]), _logits([2.0, 1.0, 0.5]))
    probs = torch.softmax(out, dim=-1)[0].tolist()
    expected = _softmax([4.0, 2.0, 1.0])  # = [0.8438, 0.1142, 0.0420]
    assert probs == pytest.approx(expected, abs=1e-6)
    assert probs == pytest.approx([0.843795, 0.114195, 0.042010], abs=1e-6)


def test_temperature_two_flattens_distribution():
    out = Temperature(2.0)(_ids([]), _logits([2.0, 1.0, 0.5]))
    probs = torch.softmax(out, dim=-1)[0].tolist()
    assert probs == pytest.approx([0.481024, 0.291756, 0.227220], abs=1e-6)


# --- top-k ------------------------------------------------------------------------


def test_top_k_keeps_k_highest():
    out = TopK(2)(_ids([]), _logits([0.1, 3.0, -1.0, 2.0]))
    assert out.tolist() == [[NEG_INF, 3.0, NEG_INF, 2.0]]


def test_top_k_keeps_ties_with_kth():
    out = TopK(2)(_ids([]), _logits([3.0, 1.0, 1.0, 0.0]))
    assert _kept(out) == [True, True, True, False]
    out = TopK(1)(_ids([]), _logits([2.0, 2.0, 1.0]))
    assert _kept(out) == [True, True, False]


def test_top_k_larger_than_vocab_keeps_everything():
    logits = _logits([0.3, 0.2])
    assert torch.equal(TopK(10)(_ids([]), logits), logits)


def test_top_k_per_row():
    out = TopK(1)(_ids([], []), _logits([1.0, 2.0], [5.0, 4.0]))
    assert out.tolist() == [[NEG_INF, 2.0], [5.0, NEG_INF]]


# --- top-p ------------------------------------------------------------------------


def test_top_p_keeps_the_crossing_token():
    probs = [0.4, 0.3, 0.15, 0.1, 0.05]
    out = TopP(0.9)(_ids([]), _logits([math.log(p) for p in probs]))
    # mass strictly before each token: 0, .4, .7, .85, .95 -> first four are < .9
    assert _kept(out) == [True, True, True, True, False]
    renormalised = torch.softmax(out, dim=-1)[0].tolist()
    expected = [p / 0.95 for p in probs[:4]] + [0.0]
    assert renormalised == pytest.approx(expected, abs=1e-6)


def test_top_p_exact_boundary_drops_token():
    uniform = _logits([0.0, 0.0, 0.0, 0.0])  # exactly 0.25 each
    # masses before: 0, .25, .5, .75; a token with exactly p before it is dropped (HF)
    assert _kept(TopP(0.5)(_ids([]), uniform)) == [True, True, False, False]
    assert _kept(TopP(0.51)(_ids([]), uniform)) == [True, True, True, False]


def test_top_p_always_keeps_at_least_one():
    out = TopP(0.01)(_ids([]), _logits([0.0, 1.0, 0.5]))
    assert _kept(out) == [False, True, False]


def test_top_p_one_keeps_everything():
    logits = _logits([0.0, -20.0, 1.0])
    assert torch.equal(TopP(1.0)(_ids([]), logits), logits)


def test_top_p_sees_distribution_after_top_k():
    # Reference worked example: logits A..E, T=1.5, top_k 3.
    z = [2.0, 1.0, 0.5, 0.1, -1.0]
    ids, logits = _ids([]), _logits(z)
    after_k = _softmax([v / 1.5 for v in z[:3]])  # renormalised over {A, B, C}
    assert after_k == pytest.approx([0.531548, 0.272906, 0.195546], abs=1e-6)

    at_08 = build_pipeline(1.5, 3, 0.8, 1.0)(ids, logits)
    assert _kept(at_08) == [True, True, False, False, False]  # C's prefix .8045 >= .8
    two = _softmax([v / 1.5 for v in z[:2]])
    assert torch.softmax(at_08, -1)[0, :2].tolist() == pytest.approx(two, abs=1e-6)
    assert two == pytest.approx([0.660756, 0.339244], abs=1e-6)

    at_085 = build_pipeline(1.5, 3, 0.85, 1.0)(ids, logits)
    assert _kept(at_085) == [True, True, True, False, False]
    assert torch.softmax(at_085, -1)[0, :3].tolist() == pytest.approx(after_k, abs=1e-6)


# --- constructor errors name the case field ---------------------------------------


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: TopP(0.0), "sampling.top_p"),
        (lambda: TopP(1.5), "sampling.top_p"),
        (lambda: TopP(float("nan")), "sampling.top_p"),
        (lambda: TopK(-1), "sampling.top_k"),
        (lambda: TopK(2.5), "sampling.top_k"),
        (lambda: Temperature(0.0), "sampling.temperatures"),
        (lambda: Temperature(GREEDY_EPSILON), "sampling.temperatures"),
        (lambda: Temperature(float("inf")), "sampling.temperatures"),
        (lambda: RepetitionPenalty(0.0), "sampling.repetition_penalty"),
        (lambda: RepetitionPenalty(-1.0), "sampling.repetition_penalty"),
        (lambda: build_pipeline(-0.1, 0, 1.0, 1.0), "sampling.temperatures"),
        (lambda: build_pipeline(0.0, 50, 0.0, 1.0), "sampling.top_p"),  # greedy still validates
        (lambda: build_pipeline(0.7, -5, 0.9, 1.0), "sampling.top_k"),
    ],
)
def test_invalid_parameters_raise_case_error_naming_field(make, field):
    with pytest.raises(CaseError) as info:
        make()
    assert info.value.field == field
    assert str(info.value).startswith(field)


# --- build_pipeline ---------------------------------------------------------------


def test_settings_that_change_nothing_add_no_processor():
    pipeline = build_pipeline(1.0, 0, 1.0, 1.0)
    assert pipeline.processors == () and pipeline.greedy is False


def test_pipeline_order_is_fixed():
    pipeline = build_pipeline(0.7, 50, 0.9, 1.2)
    assert [type(p) for p in pipeline.processors] == [RepetitionPenalty, Temperature, TopK, TopP]
    assert pipeline.processors[1].temperature == 0.7
    assert pipeline.processors[2].k == 50 and pipeline.processors[3].p == 0.9


@pytest.mark.parametrize("temperature", [0.0, GREEDY_EPSILON])
def test_greedy_keeps_only_the_penalty(temperature):
    pipeline = build_pipeline(temperature, 50, 0.9, 2.0)
    assert pipeline.greedy
    assert [type(p) for p in pipeline.processors] == [RepetitionPenalty]


def test_greedy_output_is_one_hot_after_penalty():
    pipeline = build_pipeline(0.0, 0, 1.0, 2.0)
    logits = _logits([2.0, 1.5, -3.0])
    out = pipeline(_ids([0]), logits)  # token 0 penalised to 1.0, so 1 wins
    assert out.tolist() == [[NEG_INF, 1.5, NEG_INF]]
    assert pipeline.sample(out, []).tolist() == [1]
    assert logits.tolist() == [[2.0, 1.5, -3.0]]


def test_pipeline_upcasts_to_float32_and_copies():
    logits = torch.tensor([[1.0, 2.0]], dtype=torch.bfloat16)
    out = build_pipeline(1.0, 0, 1.0, 1.0)(_ids([]), logits)
    assert out.dtype == torch.float32 and out.tolist() == [[1.0, 2.0]]
    f32 = _logits([1.0, 2.0])
    assert build_pipeline(1.0, 0, 1.0, 1.0)(_ids([]), f32).data_ptr() != f32.data_ptr()


# --- sampling ---------------------------------------------------------------------


def _generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def test_sample_frequencies_match_processed_distribution():
    z = [2.0, 1.0, 0.5, 0.1, -1.0]
    pipeline = build_pipeline(1.5, 3, 0.85, 1.0)
    processed = pipeline(_ids([]), _logits(z))
    n = 6000
    draws = pipeline.sample(processed.expand(n, -1), [_generator(1000 + i) for i in range(n)])
    counts = torch.bincount(draws, minlength=5).tolist()
    assert counts[3] == 0 and counts[4] == 0  # removed by top-k
    expected_probs = _softmax([v / 1.5 for v in z[:3]])
    result = chisquare(counts[:3], [p * n for p in expected_probs])
    assert result.pvalue > 0.001


def test_sample_same_seed_same_draw_alone_or_in_batch():
    pipeline = build_pipeline(1.2, 0, 1.0, 1.0)
    row = _logits([0.3, 0.1, 0.2, 0.0, 0.25, 0.15])
    others = _logits([5.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 5.0])
    for seed in range(20):
        alone = pipeline.sample(pipeline(_ids([]), row), [_generator(seed)])
        batch = torch.cat([others[:1], row, others[1:]])
        together = pipeline.sample(
            pipeline(_ids([], [], []), batch), [_generator(99), _generator(seed), _generator(7)]
        )
        assert together[1].item() == alone[0].item()


def test_sample_needs_one_generator_per_row():
    pipeline = build_pipeline(1.0, 0, 1.0, 1.0)
    with pytest.raises(ValueError):
        pipeline.sample(_logits([0.0, 1.0], [1.0, 0.0]), [_generator(0)])


def test_pipeline_is_frozen():
    pipeline = Pipeline(processors=(), greedy=False)
    with pytest.raises(AttributeError):
        pipeline.greedy = True  # type: ignore[misc]


# --- the running seen-token mask ---------------------------------------------------


def test_seen_mask_penalises_exactly_as_the_ids_do():
    gen = torch.Generator().manual_seed(3)
    prompt = [4, 4, 9, 0]
    seen = SeenTokens(prompt, rows=3, vocab=12)
    histories = [list(prompt) for _ in range(3)]
    penalty = RepetitionPenalty(1.7)
    for _ in range(5):
        logits = torch.randn(3, 12, generator=gen) * 3
        by_ids = penalty(torch.tensor(histories), logits)
        assert torch.equal(penalty(seen.mask, logits), by_ids)
        step = torch.randint(0, 12, (3,), generator=gen)
        seen.add(step)
        for history, token in zip(histories, step.tolist()):
            history.append(token)
    seen.keep(torch.tensor([2, 0]))
    histories = [histories[2], histories[0]]
    logits = torch.randn(2, 12, generator=gen)
    assert torch.equal(penalty(seen.mask, logits), penalty(torch.tensor(histories), logits))


def test_seen_mask_starts_from_the_prompt_for_every_row():
    seen = SeenTokens([1, 3, 3], rows=2, vocab=5)
    assert seen.mask.tolist() == [[False, True, False, True, False]] * 2
    seen.add(torch.tensor([0, 4]))
    assert seen.mask.tolist() == [[True, True, False, True, False], [False, True, False, True, True]]


# --- temperature last (llama.cpp, Ollama) -------------------------------------------


def test_order_matters_only_with_a_temperature_and_top_p():
    assert build_pipeline(0.7, 50, 0.9, 1.0).order_matters
    assert not build_pipeline(0.7, 50, 1.0, 1.0).order_matters  # top-k keeps the same set at any scale
    assert not build_pipeline(1.0, 50, 0.9, 1.0).order_matters
    assert not build_pipeline(0.0, 50, 0.9, 1.0).order_matters


@pytest.mark.parametrize(("temperature", "top_k", "top_p"), [(0.4, 0, 0.6), (1.6, 5, 0.8), (0.7, 3, 0.95)])
def test_temperature_last_kept_set_is_top_p_on_the_untempered_logits(temperature, top_k, top_p):
    gen = torch.Generator().manual_seed(5)
    logits = torch.randn(6, 20, generator=gen) * 2
    ids = torch.empty(6, 0, dtype=torch.long)
    processed, other = build_pipeline(temperature, top_k, top_p, 1.0).process(ids, logits, compare_temperature_last=True)
    # The llama.cpp order by hand: top-k, then top-p, on the untempered logits.
    expected = build_pipeline(1.0, top_k, top_p, 1.0)(ids, logits)
    assert torch.equal(other, torch.isfinite(expected))
    assert torch.equal(processed, build_pipeline(temperature, top_k, top_p, 1.0)(ids, logits))
    assert build_pipeline(temperature, top_k, 1.0, 1.0).process(ids, logits, compare_temperature_last=True)[1] is None
