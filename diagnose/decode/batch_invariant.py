"""Half precision whose result for a row does not depend on the other rows of its batch.

A seed must give the same text whatever else shares its batch (contract section 3).
Kernels pick their blocking, and so the order of each row's sums, by the number
of rows: MKL's float32 GEMM takes another path below a dozen rows, oneDNN's
bfloat16 GEMM another kernel per row count, and PyTorch's CPU flash-attention
kernel cuts its queries into blocks whose last one is as large as the rows left.
In float32 those orders differ in the last bit and no token moves; in bfloat16
or float16 every product is rounded to 8 or 11 bits, so a one-bit difference now
and then flips a rounding, and it grows through the layers into other text.

The cure is the one of vLLM's batch-invariant mode and Thinking Machines'
batch-invariant kernels on GPUs, fixed tiles: in a decode step (:func:`decoding`)
every product over rows is called with the same number of rows,
:data:`ROWS_PER_CALL`, the last call zero-padded (:func:`in_fixed_row_chunks`),
so each row is computed by a call of the same shape whatever the batch, and a row's place in its call does not change its
sums (measured: ``tests/sampling/test_batch_invariant.py``). On CPU the products
run in float32 on weights converted once (:func:`install`), their output rounded
once to the model's dtype, as a GPU's half-precision GEMM accumulates: the rows
then agree bit for bit, not only their tokens.

Applied to every ``nn.Linear`` of a half-precision model on CPU (the language-model
head included) and to the shared-prefix attention's prefix kernel
(:func:`diagnose.decode.shared_prefix.prefix_attention`). float32 models and other
devices keep their kernels as they are; the report says which
(``environment.batch_invariance``) and measures whether seeds reproduced
(``environment.reproducibility``) either way.
"""

from __future__ import annotations

import functools
import types
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import torch

HALF = (torch.bfloat16, torch.float16)

ROWS_PER_CALL = 16
"""Rows of every product call in a batch-invariant decode step: at most the CPU flash kernel's
smallest query block (32), so a call's queries are one block. The cost of the choice: a lone row
computes 16, a batch of 48 reads each weight three times per step."""

_FLOAT32_WEIGHT = "_diagnose_float32_weight"


@dataclass(frozen=True)
class BatchInvariance:
    mode: str
    """``fixed_row_chunks`` (this module's products) or ``none`` (the model's own kernels)."""
    reason: str

    def to_dict(self) -> dict[str, str]:
        """The report's ``environment.batch_invariance``."""
        return {"mode": self.mode, "reason": self.reason}


def applies(dtype: torch.dtype, device: torch.device | str) -> bool:
    """Whether products of this dtype on this device run in fixed row chunks."""
    return dtype in HALF and torch.device(device).type == "cpu"


def in_fixed_row_chunks(compute: Callable[[torch.Tensor], Any], rows: torch.Tensor, dim: int = 0) -> Any:
    """``compute`` over ``rows`` cut along ``dim`` into chunks of exactly :data:`ROWS_PER_CALL`
    (the last zero-padded), the results joined along the same dimension and cut back to the
    rows given. ``compute`` returns a tensor or a tuple of tensors, each with the rows at ``dim``."""
    count = rows.shape[dim]
    if count == 0:  # e.g. an expert no token was routed to
        return compute(rows)
    padding = -count % ROWS_PER_CALL
    if padding:
        shape = list(rows.shape)
        shape[dim] = padding
        rows = torch.cat([rows, rows.new_zeros(shape)], dim=dim)
    results = [compute(chunk) for chunk in rows.split(ROWS_PER_CALL, dim=dim)]
    if isinstance(results[0], tuple):
        return tuple(torch.cat(parts, dim=dim).narrow(dim, 0, count) for parts in zip(*results))
    return torch.cat(results, dim=dim).narrow(dim, 0, count)


_DECODING: ContextVar[bool] = ContextVar("diagnose_batch_invariant_decoding", default=False)


@contextmanager
def decoding() -> Iterator[None]:
    """While inside (a decode step, whose rows are the batch's), products run in fixed row chunks.
    Outside, a prefill's rows are the positions of one prompt: one float32 call for all of them
    gives that prompt the same result whatever is decoded after it, and costs no padding."""
    token = _DECODING.set(True)
    try:
        yield
    finally:
        _DECODING.reset(token)


def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    """``F.linear`` in float32, rounded once to ``x``'s dtype (``weight`` and ``bias`` in float32);
    in fixed row chunks while :func:`decoding`."""
    rows = x.reshape(-1, x.shape[-1]).float()
    product = functools.partial(torch.nn.functional.linear, weight=weight, bias=bias)
    out = in_fixed_row_chunks(product, rows) if _DECODING.get() else product(rows)
    return out.to(x.dtype).view(*x.shape[:-1], weight.shape[0])


def _forward(module: torch.nn.Linear, x: torch.Tensor) -> torch.Tensor:
    weight, bias = getattr(module, _FLOAT32_WEIGHT)
    return linear(x, weight, bias)


@torch.no_grad()
def install(model: Any) -> BatchInvariance:
    """Make every half-precision ``nn.Linear`` of a CPU ``model`` batch-invariant (:func:`linear`),
    each with a float32 copy of its weight made here; returns what the report says."""
    parameter = next(model.parameters(), None)
    if parameter is None or not applies(parameter.dtype, parameter.device):
        where = "float32" if parameter is None or parameter.dtype not in HALF else f"{parameter.device.type}"
        return BatchInvariance("none", f"the model's own kernels ({where}); whether a seed reproduces "
                                       "in another batch is measured (environment.reproducibility)")
    linears = 0
    for module in model.modules():
        if type(module) is torch.nn.Linear and applies(module.weight.dtype, module.weight.device):
            if not hasattr(module, _FLOAT32_WEIGHT):
                bias = module.bias.detach().float() if module.bias is not None else None
                setattr(module, _FLOAT32_WEIGHT, (module.weight.detach().float(), bias))
                module.forward = types.MethodType(_forward, module)
            linears += 1
    return BatchInvariance("fixed_row_chunks", (
        f"{str(parameter.dtype).removeprefix('torch.')} on CPU: {linears} linear layers and the prefix "
        f"attention run in float32, {ROWS_PER_CALL} rows per call, rounded once"))
