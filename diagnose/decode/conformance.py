"""The engine against each model family's own attention: exact, refused, or wrong (``diagnose check-engine``).

For every family in transformers' causal-LM auto mapping:

1. a tiny config with seeded random weights (small sliding windows where the
   family has them, so the prompt is longer than every window);
2. the engine decodes seeds x temperatures with the attention path
   :func:`~diagnose.decode.attention_plan.plan_attention` chooses;
3. the reference decodes the same rows with prompt copies and the model's stock
   attention (the way transformers runs it);
4. exact, in float32 and on the prompt-copies path: every row gives the same tokens
   and the raw log-probabilities agree within :data:`TOLERANCE`. A family the plan
   refuses runs prompt copies and says why. Families whose tiny model cannot be
   built or run are skipped with the reason (encoder-decoders, encoders,
   multimodal wrappers, ...).

Half precision (bfloat16, float16) has no single right answer: every kernel rounds
in its own order, and a rounding difference anywhere grows through the layers
(a routing flip in a mixture of experts, or a different token, changes all that
follows). Two equally good half-precision computations therefore end up apart by
chance, so the end-to-end numbers (``rows_same``, ``max_dlogprob``) are printed
but cannot decide. What the engine replaces is the attention kernel, and that is
judged on identical inputs, without chance: at every decode step and layer, with
the stock attention's tokens fed to every row, the engine's attention output, the
stock attention on the same query, keys and values (the prompt's and the row's
own, cut to the layer's window independently of the kernel), and the same stock
function in float64 (exact arithmetic). With ``u`` one unit in the last place of
the half-precision type at the largest exact output of the call (the finest step
the type has there), the engine is exact when, at every call, its largest error
is at most the stock kernel's or :data:`KERNEL_ULPS` ``u``, whichever is larger
(:class:`KernelError`): no worse than the model's own attention, or correctly
rounded. A dropped window, softcap or sink is many ``u`` off. The line adds
``kernel_ulps`` and ``stock_kernel_ulps`` of the call that came closest to failing.
"""

from __future__ import annotations

import contextlib
import functools
import math
from dataclasses import dataclass, field
from typing import Any, Iterator

import torch

from diagnose.case import SamplingSpec
from diagnose.decode.backend import TransformersBackend
from diagnose.decode.engine import Trace, decode_rows, rows_for

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
"""float32 and prompt copies: the largest |raw log-probability difference| from the stock attention
that counts as exact."""
KERNEL_ULPS = 0.51
"""Half precision: the error of a correctly rounded attention output, in units in the last place at
the call's largest output (half a unit; float32 arithmetic before the one rounding adds far less
than a hundredth). The engine passes a call within this or the stock kernel's own error."""

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
HYBRID_LAYERS: dict[str, dict[str, Any]] = {
    "jamba": {"attn_layer_period": 2, "attn_layer_offset": 1},
    "bamba": {"attn_layer_indices": [1]},
    "recurrent_gemma": {"block_types": ["recurrent", "attention"]},
}
"""Hybrids that place their attention layers by settings of their own, not ``layer_types``: one
recurrent and one attention layer (two layers of their default would both be recurrent)."""


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
    kernel: "KernelError | None" = None
    """Half precision on the shared prefix only: the attention kernel against the stock one and exact arithmetic."""

    @property
    def exact(self) -> bool:
        if self.kernel is None:
            return self.rows_same == self.rows and self.max_dlogprob <= TOLERANCE
        return self.kernel.exact

    @property
    def outcome(self) -> str:
        """``exact`` (shared prefix, exact), ``refused`` (prompt copies, exact) or ``wrong``."""
        if not self.exact:
            return "wrong"
        return "exact" if self.path == "shared_prefix" else "refused"

    def line(self) -> str:
        half = "" if self.kernel is None else f" {self.kernel.describe()}"
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
        return Skipped(family, f"the model does not decode with prompt copies and its own attention: {_first_line(exc)}")
    engine = TransformersBackend(built, _IdsOnly(), "cpu")
    plan = engine.choose_attention()
    try:
        traces = decode_rows(engine, prompt, rows, SPEC)
    except Exception as exc:  # the engine failing where the reference ran is a wrong family, with its error
        return FamilyResult(family, plan.path, f"{plan.reason}; the engine failed: {_first_line(exc)}",
                            len(rows), 0, float("inf"))
    same, worst = compare(traces, reference)
    if dtype == torch.float32 or not engine.shared_prefix:
        return FamilyResult(family, plan.path, plan.reason, len(rows), same, worst)
    # Half precision: every path on the stock attention's tokens; the kernel judged call by call.
    tokens = [[step.token for step in trace.steps] for trace in reference]
    stock = forced_logprobs(reference_backend, prompt, tokens, stock=True)
    kernel = KernelError(dtype)
    try:
        with measuring(kernel):
            engine_logprobs = forced_logprobs(engine, prompt, tokens)
    except Exception as exc:  # as above: wrong, with the error
        return FamilyResult(family, plan.path, f"{plan.reason}; the kernel check failed: {_first_line(exc)}",
                            len(rows), same, worst, kernel=KernelError(dtype))  # no call measured: not exact
    return FamilyResult(family, plan.path, plan.reason, len(rows), same, _largest(engine_logprobs - stock),
                        kernel=kernel)


@dataclass
class KernelError:
    """The shared-prefix kernel against the stock attention, both against exact arithmetic, call by call.

    Errors are the largest |output - exact| of a call, in units in the last place of ``dtype``
    at the call's largest exact output. A call passes when the engine's error is at most the
    stock kernel's or :data:`KERNEL_ULPS`, whichever is larger; the worst call is the one with
    the largest engine error over that bound.
    """

    dtype: torch.dtype
    calls: int = 0
    worst: tuple[float, float] | None = None
    """(engine, stock) errors of the call closest to failing, in units."""
    _margin: float = field(default=-math.inf, repr=False)

    def add(self, engine: torch.Tensor, stock: torch.Tensor, exact: torch.Tensor) -> None:
        largest = float(exact.abs().amax())
        unit = torch.finfo(self.dtype).eps * 2.0 ** math.floor(math.log2(largest)) if largest > 0 else \
            torch.finfo(self.dtype).tiny
        errors = (_largest(engine.double() - exact) / unit, _largest(stock.double() - exact) / unit)
        margin = errors[0] / max(errors[1], KERNEL_ULPS)
        self.calls += 1
        if margin > self._margin:
            self._margin, self.worst = margin, errors

    @property
    def exact(self) -> bool:
        return self.calls > 0 and self._margin <= 1.0

    def describe(self) -> str:
        engine, stock = self.worst or (math.inf, math.inf)
        return f"kernel_ulps={engine:.2f} stock_kernel_ulps={stock:.2f}"


@contextlib.contextmanager
def measuring(kernel: KernelError) -> Iterator[None]:
    """While inside, every shared-prefix attention call is also measured into ``kernel``."""
    from transformers import AttentionInterface

    from diagnose.decode import shared_prefix

    names = {shared_prefix.registered_name(stock): stock for stock in shared_prefix.STOCKS}
    originals = {name: AttentionInterface._global_mapping.get(name) for name in names}
    for name, stock in names.items():
        AttentionInterface.register(name, functools.partial(_measured, kernel, stock=stock))
    try:
        yield
    finally:
        for name, original in originals.items():
            if original is None:
                AttentionInterface._global_mapping.pop(name, None)
            else:
                AttentionInterface.register(name, original)


def _measured(kernel: KernelError, module, query, key, value, attention_mask, shared_prefix=None, stock="sdpa",
              **kwargs):
    """The engine's attention, and beside it the stock one on the same inputs and exact arithmetic."""
    from diagnose.decode import shared_prefix as kernels

    out = kernels.shared_prefix_attention(module, query, key, value, attention_mask,
                                          shared_prefix=shared_prefix, stock=stock, **kwargs)
    if shared_prefix is None:
        return out
    # Every key the row's query sees, by position: the prompt's kept keys, then the row's own
    # (a sliding cache may have dropped the oldest of those: then the prompt is out of the window),
    # the layer's window cut from their end. The check decodes one prompt, prefilled whole: the
    # tree's one branch (no root).
    tree = shared_prefix
    if tree.root is not None or len(tree.branches) != 1:
        raise RuntimeError("the kernel check measures one prompt prefilled whole, not a tree of several")
    layer = tree.branches[0][module.layer_idx]
    window = kwargs.get("sliding_window")
    prompt_end = layer.start + layer.keys.shape[2]
    suffix_start = tree.position(0) - key.shape[2] + 1
    if suffix_start == prompt_end:  # the prefix may be kept wider than the model's dtype: back to it, exactly
        keys = torch.cat([layer.keys.to(key.dtype).expand(query.shape[0], -1, -1, -1), key], dim=2)
        values = torch.cat([layer.values.to(value.dtype).expand(query.shape[0], -1, -1, -1), value], dim=2)
    elif window is not None and suffix_start > prompt_end and key.shape[2] >= window:
        keys, values = key, value
    else:
        raise RuntimeError(f"layer {module.layer_idx}: the row's keys start at position {suffix_start}, "
                           f"the prompt's end at {prompt_end}")
    if window is not None:
        keys, values = keys[:, :, -window:], values[:, :, -window:]
    reference = kernels.stock_attention(module, stock)
    stock_out = reference(module, query, keys, values, None, **kwargs)[0]
    wide = {name: v.double() if torch.is_tensor(v) and v.is_floating_point() else v for name, v in kwargs.items()}
    exact = reference(module, query.double(), keys.double(), values.double(), None, **wide)[0]
    kernel.add(out[0], stock_out, exact)
    return out


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

    from diagnose.decode.attention_plan import stock_implementation

    try:
        default = AutoConfig.for_model(family)
        config = AutoConfig.for_model(family, **TINY, **_biting(default), **HYBRID_LAYERS.get(family, {}))
    except Exception as exc:  # third-party config constructors raise anything
        return Skipped(family, f"no tiny config: {_first_line(exc)}")
    if getattr(config, "is_encoder_decoder", False):
        return Skipped(family, "an encoder-decoder model, not decoder-only")
    _every_kind_of_layer(config, default)
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
    model = model.eval()
    if not _causal(model, config):
        return Skipped(family, "a bidirectional encoder unless configured as a decoder (its first position "
                               "sees later tokens), not decoder-only")
    return model.to(dtype)


@torch.no_grad()
def _causal(model: Any, config: Any, length: int = 6) -> bool:
    """Whether the first position's logits ignore the last token (within rounding), as a causal
    LM's must. Asked of the model, not its config: ``is_decoder`` is False by default in GPT-NeoX's
    config as in BERT's, and only BERT-like models then attend both ways. A forward that fails
    here says nothing."""
    vocab = max(int(getattr(config, "vocab_size", 0) or 0), 2)
    ids = torch.arange(1, length + 1).unsqueeze(0) % vocab
    changed = ids.clone()
    changed[0, -1] = (ids[0, -1] + 1) % vocab
    try:
        first, second = (model(input_ids=x, use_cache=False).logits[0, 0] for x in (ids, changed))
    except Exception:  # noqa: BLE001 - the decode that follows reports the model's own failure
        return True
    # Not bitwise: a mixture of experts sums each expert over the tokens routed to it, so the
    # first position moves in the last bits when another token joins; attending both ways moves it far.
    return float((first - second).abs().max()) <= 1e-4 * max(float(first.abs().max()), 1.0)


def _biting(default: Any) -> dict[str, Any]:
    """The family's own attention features, set so that they change the result at this size:
    a window shorter than the prompt, a softcap near the scores' scale."""
    features: dict[str, Any] = {}
    if hasattr(default, "sliding_window"):
        features["sliding_window"] = WINDOW
    if getattr(default, "attn_logit_softcapping", None) is not None:
        features["attn_logit_softcapping"] = SOFTCAP
    return features


def _every_kind_of_layer(config: Any, default: Any) -> None:
    """Every kind of layer the family has, in its order, repeated over the depth (two layers would
    keep only the first kinds): sliding and full attention alternate, and a hybrid keeps an
    attention layer beside its recurrent ones (a family whose default is recurrent only gets one:
    its checkpoints name their attention layers)."""
    kinds = list(dict.fromkeys(getattr(default, "layer_types", None) or []))
    if not kinds:
        return
    if not any("attention" in kind and "linear" not in kind for kind in kinds):
        kinds.append("full_attention")
    depth = max(config.num_hidden_layers, len(kinds))
    with contextlib.suppress(AttributeError):  # a family that derives its layer types from other settings
        config.num_hidden_layers = depth
        config.layer_types = (kinds * depth)[:depth]


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
