"""A seed gives the same text whatever else is in the batch, in bfloat16 too (contract section 3)."""

from __future__ import annotations

import pytest
import torch

from diagnose.case import SamplingSpec
from diagnose.decode.backend import TransformersBackend
from diagnose.decode.conformance import _IdsOnly, tiny_model
from diagnose.decode.engine import decode_rows, rows_for


# gemma2: its tiny model parted from its batch twin at step 5 while the model's own bf16 GEMMs ran
# (oneDNN's o_proj rounded rows 0 and 4 of an 8-row batch differently from the same row alone);
# half precision on CPU now runs batch-invariantly (diagnose.decode.batch_invariant).
@pytest.mark.parametrize("family", ["llama", "gemma2"])
def test_each_row_is_bitwise_the_same_alone_and_in_other_batches_in_bfloat16(family):
    backend = TransformersBackend(tiny_model(family, torch.bfloat16, 0), _IdsOnly(), "cpu")
    assert backend.choose_attention().path == "shared_prefix"
    spec = SamplingSpec(seeds=4, temperatures=[0.0, 0.9], max_new_tokens=8)
    prompt = list(range(3, 43))
    rows = rows_for(spec)
    together = decode_rows(backend, prompt, rows, spec)
    reversed_rows = {t.row: t for t in decode_rows(backend, prompt, rows[::-1][:5], spec)}
    for trace in together:
        others = [reversed_rows.get(trace.row), decode_rows(backend, prompt, [trace.row], spec)[0]]
        for other in filter(None, others):
            assert other.tokens == trace.tokens
            assert [s.raw_logprob for s in other.steps] == [s.raw_logprob for s in trace.steps]
