"""The machine's limit for a sampling job: a roofline from two measured rates.

A pass of the model cannot finish faster than its arithmetic at the measured
matrix-multiply throughput, nor faster than its memory traffic at the measured
read bandwidth; its floor is the larger of the two (the roofline model).

* **Prefill** of a prompt of ``P`` tokens: every linear layer once per token
  (2 FLOPs per weight), causal attention (``4 * head_dim`` FLOPs per query-key
  pair per head, ``P (P + 1) / 2`` pairs), and the vocabulary projection of the
  last position only. Its bytes are the weights, read once.
* **A decode pass** of ``r`` rows, each ``s`` tokens into its own suffix: the
  linear layers and vocabulary projection for ``r`` tokens, and attention of
  ``r`` queries over ``P + s`` keys. Its bytes are the weights read once for the
  whole batch, the shared prompt's keys and values read once, and each row's
  own suffix keys and values.

Both rates are measured here, in this process: :func:`measure_machine` times
``torch.matmul`` on the model's own layer shapes (and one 1024-square product,
so that a tiny model's floor is still the machine's) and ``torch.sum`` over a
buffer far larger than the last-level cache.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Sequence

import torch

#: Bytes read by the bandwidth probe: far past any CPU cache.
_PROBE_BYTES = 512 * 2**20
#: Side of the square matmul probed beside the model's shapes.
_PEAK_SIDE = 1024


@dataclass(frozen=True)
class ModelShape:
    """What the roofline needs to know about a decoder-only transformer."""

    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    hidden: int
    vocab: int
    linear_params: int
    """Weights of every linear layer in the decoder blocks (not the vocabulary projection)."""
    weight_bytes: int
    """All parameters as stored, tied embeddings once: what a pass reads."""
    kv_bytes_per_element: int
    linear_shapes: tuple[tuple[int, int], ...] = ()
    """(in, out) of each distinct linear layer, for the throughput probe."""

    @classmethod
    def of(cls, model: Any) -> "ModelShape":
        config = model.config
        heads = int(config.num_attention_heads)
        hidden = int(config.hidden_size)
        output = model.get_output_embeddings()
        linears = [
            m for m in model.modules() if isinstance(m, torch.nn.Linear) and m is not output
        ]
        parameter = next(model.parameters())
        return cls(
            layers=int(config.num_hidden_layers),
            heads=heads,
            kv_heads=int(getattr(config, "num_key_value_heads", None) or heads),
            head_dim=int(getattr(config, "head_dim", None) or hidden // heads),
            hidden=hidden,
            vocab=int(config.vocab_size),
            linear_params=sum(m.weight.numel() for m in linears),
            weight_bytes=sum(p.numel() * p.element_size() for p in model.parameters()),
            kv_bytes_per_element=parameter.element_size(),
            linear_shapes=tuple(sorted({(m.in_features, m.out_features) for m in linears})),
        )

    def prefill_flops(self, prompt_tokens: int) -> float:
        p = prompt_tokens
        attention = 4 * self.head_dim * self.heads * self.layers * p * (p + 1) / 2
        return 2.0 * self.linear_params * p + 2.0 * self.hidden * self.vocab + attention

    def kv_bytes_per_token(self) -> int:
        return self.layers * 2 * self.kv_heads * self.head_dim * self.kv_bytes_per_element

    def decode_flops(self, rows: int, prompt_tokens: int, suffix_tokens: int) -> float:
        per_row = 2.0 * (self.linear_params + self.hidden * self.vocab)
        attention = 4.0 * self.head_dim * self.heads * self.layers * (prompt_tokens + suffix_tokens)
        return rows * (per_row + attention)

    def decode_bytes(self, rows: int, prompt_tokens: int, suffix_tokens: int) -> float:
        kv = self.kv_bytes_per_token()
        return float(self.weight_bytes + kv * prompt_tokens + rows * kv * suffix_tokens)


@dataclass(frozen=True)
class Machine:
    """Rates measured on this machine, in this process."""

    matmul_flops_per_s: float
    bandwidth_bytes_per_s: float
    dtype: str
    threads: int
    device: str = "cpu"

    def describe(self) -> str:
        where = f"{self.threads} threads" if self.device == "cpu" else self.device
        return (
            f"machine: matmul {self.matmul_flops_per_s / 1e9:.1f} GFLOP/s ({self.dtype}, "
            f"{where}, best of the model's layer shapes and a 1024-square product), "
            f"read bandwidth {self.bandwidth_bytes_per_s / 1e9:.1f} GB/s"
        )


def _best_seconds(work, repeats: int, device: str) -> float:
    def timed() -> float:
        started = time.perf_counter()
        work()
        if device.startswith("cuda"):
            torch.cuda.synchronize(device)
        return time.perf_counter() - started

    timed()  # warm-up: first calls pay for allocation and kernel selection
    return min(timed() for _ in range(repeats))


def measure_machine(shape: ModelShape, dtype: torch.dtype, tokens: int, repeats: int = 3, device: str = "cpu") -> Machine:
    """Best matmul throughput over the model's layer shapes at ``tokens`` rows, and read bandwidth."""
    generator = torch.Generator().manual_seed(0)
    best_rate = 0.0
    # The model's own layer shapes, and one square product large enough to reach the
    # machine's peak even when the model's layers are too small to (a tiny test model).
    shapes = (*shape.linear_shapes, (_PEAK_SIDE, _PEAK_SIDE))
    with torch.inference_mode():
        for fan_in, fan_out in shapes:
            x = torch.randn(tokens, fan_in, generator=generator).to(device=device, dtype=dtype)
            w = torch.randn(fan_in, fan_out, generator=generator).to(device=device, dtype=dtype)
            seconds = _best_seconds(lambda: torch.matmul(x, w), repeats, device)
            best_rate = max(best_rate, 2.0 * tokens * fan_in * fan_out / seconds)
        buffer = torch.ones(_PROBE_BYTES // 4, dtype=torch.float32, device=device)
        seconds = _best_seconds(buffer.sum, repeats + 2, device)
    threads = torch.get_num_threads() if device == "cpu" else 0
    return Machine(best_rate, _PROBE_BYTES / seconds, str(dtype).removeprefix("torch."), threads, device)


@dataclass(frozen=True)
class Floor:
    """The least time this job can take on this machine, split as the table splits it."""

    prefill_seconds: float
    decode_seconds: float
    decode_memory_seconds: float
    """The decode floor from bytes alone (the bandwidth roof)."""
    decode_compute_seconds: float
    """The decode floor from FLOPs alone (the throughput roof)."""

    @property
    def seconds(self) -> float:
        return self.prefill_seconds + self.decode_seconds

    @property
    def decode_bound(self) -> str:
        return "memory" if self.decode_memory_seconds >= self.decode_compute_seconds else "compute"


def job_floor(shape: ModelShape, machine: Machine, prompt_tokens: int, rows_per_pass: Sequence[int]) -> Floor:
    """The floor of one prefill and the decode passes that advanced ``rows_per_pass[i]`` rows.

    Pass ``i`` feeds each row its ``i + 1``-th generated token, so the row's own
    suffix holds ``i + 1`` tokens when it attends.
    """
    flops, rate, bandwidth = shape.prefill_flops(prompt_tokens), machine.matmul_flops_per_s, machine.bandwidth_bytes_per_s
    prefill = max(flops / rate, shape.weight_bytes / bandwidth)
    decode = memory = compute = 0.0
    for index, rows in enumerate(rows_per_pass):
        by_bytes = shape.decode_bytes(rows, prompt_tokens, index + 1) / bandwidth
        by_flops = shape.decode_flops(rows, prompt_tokens, index + 1) / rate
        memory += by_bytes
        compute += by_flops
        decode += max(by_bytes, by_flops)
    return Floor(prefill, decode, memory, compute)
