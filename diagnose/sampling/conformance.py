"""The engine against each model family's own attention: exact, refused, or wrong (``diagnose check-engine``).

For every family in transformers' causal-LM auto mapping:

1. a tiny config with seeded random weights (small sliding windows where the
   family has them, so the prompt is longer than every window);
2. the engine decodes seeds x temperatures with the attention path
   :func:`~diagnose.sampling.attention_plan.plan_attention` chooses;
3. the reference decodes the same rows with prompt copies and the model's stock
   attention (the way transformers runs it);
4. exact: every row gives the same tokens and the raw log-probabilities agree
   within the dtype's tolerance. A family the plan refuses runs prompt copies and
   says why. Families whose tiny model cannot be built or run are skipped with the
   reason (encoder-decoders, encoders, multimodal wrappers, ...).
"""

from __future__ import annotations

import contextlib
import copy
from dataclasses import dataclass
from typing import Any, Iterator

import torch

from diagnose.case import SamplingSpec
from diagnose.sampling.backend import TransformersBackend
from diagnose.sampling.engine import Trace, decode_rows, rows_for

WINDOW = 8
"""The sliding window of the tiny configs of families that have one, in tokens; the prompt is
several windows long."""
SOFTCAP = 0.5
"""The attention-logit softcap of the tiny configs of families that softcap (scores of a tiny
random model are small: a real model's cap of 50 would change nothing)."""
PROMPT_TOKENS = 40
MAX_PARAMETERS = 30_000_000
"""A family whose tiny model is larger than this kept full-size parts (sub-configs) and is skipped."""
VOCAB = 256
SPEC = SamplingSpec(seeds=3, temperatures=[0.0, 0.9], top_k=50, top_p=0.95, max_new_tokens=10)
TOLERANCE = 1e-4
"""float32: the largest |raw log-probability difference| from the stock attention that counts as exact."""
HALF_SLACK = 1.25
"""Half precision has no single right answer (each kernel rounds in its own order), so there the
engine is exact when, on the same tokens, it is no further from float32 arithmetic on the same
weights than the stock attention itself is (times this slack, plus :data:`TOLERANCE`)."""

TINY: dict[str, Any] = {
    "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 2, "head_dim": 16, "vocab_size": VOCAB, "max_position_embeddings": 256,
    "initializer_range": 0.1, "pad_token_id": 0, "bos_token_id": 1,
    "eos_token_id": 2, "use_cache": True, "tie_word_embeddings": False,
    # mixtures of experts: a few small ones
    "num_local_experts": 4, "num_experts": 4, "n_routed_experts": 4, "num_experts_per_tok": 2,
    "moe_intermediate_size": 64,
    # GPT-2-style names for the same sizes
    "n_embd": 64, "n_layer": 2, "n_head": 4, "n_positions": 256, "n_inner": 128,
}  # fmt: skip


@dataclass(frozen=True)
class FamilyResult:
    family: str
    path: str
    reason: str
    rows: int
    rows_same: int
    max_dlogprob: float
    """float32: the largest |raw log-probability difference| from the stock attention where tokens agree;
    half precision: the largest on the stock attention's tokens (the same contexts)."""
    bound: float | None = None
    """Half precision only: the stock attention's own distance from float32 arithmetic."""
    engine_error: float | None = None
    """Half precision only: the engine's distance from float32 arithmetic."""

    @property
    def exact(self) -> bool:
        if self.bound is None:
            return self.rows_same == self.rows and self.max_dlogprob <= TOLERANCE
        return self.engine_error is not None and self.engine_error <= HALF_SLACK * self.bound + TOLERANCE

    @property
    def outcome(self) -> str:
        """``exact`` (shared prefix, exact), ``refused`` (prompt copies, exact) or ``wrong``."""
        if not self.exact:
            return "wrong"
        return "exact" if self.path == "shared_prefix" else "refused"

    def line(self) -> str:
        half = "" if self.bound is None else f" vs_float32={self.engine_error:.2e} stock_vs_float32={self.bound:.2e}"
        return (
            f"ENGINE family={self.family} path={self.path} exact={'true' if self.exact else 'false'} "
            f"rows_same={self.rows_same}/{self.rows} max_dlogprob={self.max_dlogprob:.2e}{half} "
            f"reason={_quoted(self.reason)}"
        )


@dataclass(frozen=True)
class Skipped:
    family: str
    reason: str

    def line(self) -> str:
        return f"SKIPPED family={self.family} reason={_quoted(self.reason)}"


def summary(results: list[FamilyResult | Skipped]) -> str:
    checked = [r for r in results if isinstance(r, FamilyResult)]
    count = {o: sum(r.outcome == o for r in checked) for o in ("exact", "refused", "wrong")}
    return (f"ENGINE families={len(checked)} exact={count['exact']} refused={count['refused']} "
            f"wrong={count['wrong']} skipped={len(results) - len(checked)}")


def families() -> list[str]:
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    return sorted(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES)


def check_all(names: list[str], dtype: torch.dtype) -> Iterator[FamilyResult | Skipped]:
    for name in names:
        yield check_family(name, dtype)


def check_family(family: str, dtype: torch.dtype, seed: int = 0) -> FamilyResult | Skipped:
    built = tiny_model(family, dtype, seed)
    if isinstance(built, Skipped):
        return built
    prompt = torch.randint(3, VOCAB, (PROMPT_TOKENS,), generator=torch.Generator().manual_seed(seed)).tolist()
    rows = rows_for(SPEC)
    reference_backend = TransformersBackend(built, _IdsOnly(), "cpu")
    try:
        reference = decode_rows(reference_backend, prompt, rows, SPEC)
    except Exception as exc:  # an arbitrary family's own forward: its failure is reported, not hidden
        return Skipped(family, f"the model does not decode with its own attention: {_first_line(exc)}")
    # float32 arithmetic on the same (rounded) weights, copied before the engine switches attention
    exact_math = None if dtype == torch.float32 else TransformersBackend(copy.deepcopy(built).float(), _IdsOnly(), "cpu")
    engine = TransformersBackend(built, _IdsOnly(), "cpu")
    plan = engine.choose_attention()
    try:
        traces = decode_rows(engine, prompt, rows, SPEC)
    except Exception as exc:  # the engine failing where the reference ran is a wrong family, with its error
        return FamilyResult(family, plan.path, f"{plan.reason}; the engine failed: {_first_line(exc)}",
                            len(rows), 0, float("inf"), None if exact_math is None else 0.0)
    same, worst = compare(traces, reference)
    if exact_math is None:
        return FamilyResult(family, plan.path, plan.reason, len(rows), same, worst)
    # Half precision: every path on the stock attention's tokens, against float32 on the same weights.
    tokens = [[step.token for step in trace.steps] for trace in reference]
    stock = forced_logprobs(reference_backend, prompt, tokens, stock=True)
    engine_logprobs = forced_logprobs(engine, prompt, tokens)
    truth = forced_logprobs(exact_math, prompt, tokens, stock=True)
    return FamilyResult(
        family, plan.path, plan.reason, len(rows), same, _largest(engine_logprobs - stock),
        bound=_largest(stock - truth), engine_error=_largest(engine_logprobs - truth),
    )


@torch.inference_mode()
def forced_logprobs(backend: TransformersBackend, prompt: list[int], tokens: list[list[int]],
                    stock: bool = False) -> torch.Tensor:
    """Raw log-probabilities (rows, steps, vocab) with every row fed the given tokens.

    ``stock``: prompt copies and the model's own attention, whatever the backend chose.
    """
    shared = backend.shared_prefix
    backend.shared_prefix = shared and not stock
    try:
        with backend.plain_attention() if stock else contextlib.nullcontext():
            session, logits = backend.start(prompt, len(tokens))
            steps = [torch.log_softmax(logits, dim=-1)]
            for position in range(len(tokens[0]) - 1):
                fed = torch.tensor([row[position] for row in tokens], dtype=torch.long)
                steps.append(torch.log_softmax(session.advance(fed), dim=-1))
    finally:
        backend.shared_prefix = shared
    return torch.stack(steps, dim=1)


def _largest(difference: torch.Tensor) -> float:
    """The largest |difference| over every row, step and vocabulary entry."""
    return float(difference.nan_to_num(0.0).abs().amax()) if difference.numel() else 0.0


def compare(traces: list[Trace], reference: list[Trace]) -> tuple[int, float]:
    """Rows with the same tokens, and the largest |raw log-probability difference| where tokens agree."""
    same, worst = 0, 0.0
    for got, want in zip(traces, reference):
        same += got.tokens == want.tokens and got.finish_reason == want.finish_reason
        for a, b in zip(got.steps, want.steps):
            worst = max(worst, abs(a.raw_logprob - b.raw_logprob))
            if a.token != b.token:
                break
    return same, worst


def tiny_model(family: str, dtype: torch.dtype, seed: int) -> Any:
    """A seeded tiny random model of ``family`` in eval mode, or :class:`Skipped` with the reason."""
    from transformers import AutoConfig, AutoModelForCausalLM

    from diagnose.sampling.attention_plan import stock_implementation

    try:
        default = AutoConfig.for_model(family)
        config = AutoConfig.for_model(family, **TINY, **_biting(default))
    except Exception as exc:  # third-party config constructors raise anything
        return Skipped(family, f"no tiny config: {_first_line(exc)}")
    if getattr(config, "is_encoder_decoder", False):
        return Skipped(family, "an encoder-decoder model, not decoder-only")
    if getattr(default, "is_decoder", None) is False:
        return Skipped(family, "a bidirectional encoder that decodes only when configured as a decoder, not decoder-only")
    _alternate_windows(config)
    implementation = stock_implementation(config)
    try:
        with torch.device("meta"):  # the size first: composite configs keep full-size sub-models
            parameters = sum(p.numel() for p in AutoModelForCausalLM.from_config(config).parameters())
        if parameters > MAX_PARAMETERS:
            return Skipped(family, f"the tiny config does not reach its sub-models ({parameters / 1e6:.0f}M parameters)")
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            model = AutoModelForCausalLM.from_config(config, attn_implementation=implementation)
    except Exception as exc:  # as above
        return Skipped(family, f"the tiny model cannot be built: {_first_line(exc)}")
    model.generation_config.eos_token_id = None  # every row decodes every position
    return model.to(dtype).eval()


def _biting(default: Any) -> dict[str, Any]:
    """The family's own attention features, set so that they change the result at this size:
    a window shorter than the prompt, a softcap near the scores' scale."""
    features: dict[str, Any] = {}
    if hasattr(default, "sliding_window"):
        features["sliding_window"] = WINDOW
    if getattr(default, "attn_logit_softcapping", None) is not None:
        features["attn_logit_softcapping"] = SOFTCAP
    return features


def _alternate_windows(config: Any) -> None:
    """Sliding and full layers alternate where the family mixes them, so both kinds are checked."""
    kinds = getattr(config, "layer_types", None)
    if kinds and "sliding_attention" in kinds and set(kinds) <= {"sliding_attention", "full_attention"}:
        config.layer_types = ["sliding_attention", "full_attention"] * (len(kinds) // 2) + kinds[: len(kinds) % 2]


@dataclass(frozen=True)
class _IdsOnly:
    """The backend's tokenizer when prompts are ids: no end token, no chat template."""

    eos_token_id: None = None
    pad_token_id: None = None
    chat_template: None = None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:160] if text else ''}"


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
