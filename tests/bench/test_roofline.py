"""The roofline's arithmetic, checked against counts worked out by hand for a tiny Llama."""

from __future__ import annotations

import pytest
import torch

from diagnose.bench.roofline import Machine, ModelShape, job_floor, measure_machine
from diagnose.decode.random_model import random_backend
from tests.fakes import SizedTokenizer



@pytest.fixture(scope="module")
def shape() -> ModelShape:
    # "tiny": hidden 64, intermediate 128, 2 layers, 4 heads, 2 kv heads (head_dim 16), vocab 300.
    return ModelShape.of(random_backend("tiny", SizedTokenizer(), "cpu", torch.float32).model)


def test_shape_counts_the_decoder_linears_and_every_stored_byte(shape):
    # Per layer: q 64x64 + k 64x32 + v 64x32 + o 64x64 + gate, up, down 64x128 each = 36,864.
    assert shape.linear_params == 2 * 36_864
    # Untied input and output embeddings (2 x 300 x 64), the linears, 2 norms per layer + the final one.
    assert shape.weight_bytes == 4 * (2 * 300 * 64 + 73_728 + 5 * 64)
    assert (shape.layers, shape.heads, shape.kv_heads, shape.head_dim, shape.vocab) == (2, 4, 2, 16, 300)
    assert shape.kv_bytes_per_token() == 2 * 2 * 2 * 16 * 4


def test_prefill_flops(shape):
    # Linears for 10 tokens, the vocabulary projection of the last one, causal attention (55 pairs).
    assert shape.prefill_flops(10) == 2 * 73_728 * 10 + 2 * 64 * 300 + 4 * 16 * 4 * 2 * 55


def test_decode_pass_flops_and_bytes(shape):
    # 3 rows, each attending to the 10 prompt tokens and its own 2.
    assert shape.decode_flops(3, 10, 2) == 3 * (2 * (73_728 + 64 * 300) + 4 * 16 * 4 * 2 * 12)
    assert shape.decode_bytes(3, 10, 2) == shape.weight_bytes + 512 * 10 + 3 * 512 * 2


def test_floor_takes_the_larger_roof_of_each_pass(shape):
    machine = Machine(matmul_flops_per_s=1e6, bandwidth_bytes_per_s=1e5, dtype="float32", threads=1)
    floor = job_floor(shape, machine, 10, [3, 1])
    w = shape.weight_bytes
    assert floor.prefill_seconds == pytest.approx(max(shape.prefill_flops(10) / 1e6, w / 1e5))
    memory = [(w + 5120 + 3 * 512 * 1) / 1e5, (w + 5120 + 1 * 512 * 2) / 1e5]
    compute = [shape.decode_flops(3, 10, 1) / 1e6, shape.decode_flops(1, 10, 2) / 1e6]
    assert floor.decode_memory_seconds == pytest.approx(sum(memory))
    assert floor.decode_compute_seconds == pytest.approx(sum(compute))
    assert floor.decode_seconds == pytest.approx(sum(max(m, c) for m, c in zip(memory, compute)))
    assert floor.decode_bound == "memory"
    fast_memory = Machine(1e6, 1e12, "float32", 1)
    assert job_floor(shape, fast_memory, 10, [3, 1]).decode_bound == "compute"


def test_machine_rates_are_measured_here(shape):
    machine = measure_machine(shape, torch.float32, tokens=64, repeats=1)
    assert machine.matmul_flops_per_s > 1e8 and machine.bandwidth_bytes_per_s > 1e8
    assert machine.dtype == "float32" and machine.threads == torch.get_num_threads()
    assert "GFLOP/s" in machine.describe() and "GB/s" in machine.describe()
