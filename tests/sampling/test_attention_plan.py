"""Which attention path a model gets, and why: what its layers pass decides, never a guess."""

from __future__ import annotations

import pytest
import torch

from diagnose.decode import shared_prefix
from diagnose.decode.attention_plan import plan_attention, stock_implementation
from diagnose.decode.conformance import WINDOW, tiny_model


@pytest.fixture(autouse=True)
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_plain_windowed_softcapped_and_sink_models_take_the_shared_path():
    assert plan_attention(tiny_model("llama", torch.float32, 0)).reason.endswith("plain causal attention")
    gemma2 = tiny_model("gemma2", torch.float32, 0)
    assert gemma2.config._attn_implementation == "eager"  # it softcaps: SDPA cannot
    plan = plan_attention(gemma2)
    assert plan.path == "shared_prefix"
    assert "logit softcapping 0.5" in plan.reason and f"sliding windows ({WINDOW} tokens) on 1 of 2" in plan.reason
    assert "attention sinks" in plan_attention(tiny_model("gpt_oss", torch.float32, 0)).reason


def test_a_keyword_the_kernel_does_not_implement_refuses_the_shared_path(monkeypatch):
    monkeypatch.setattr(shared_prefix, "IMPLEMENTED", ("scaling", "sliding_window", "softcap"))
    plan = plan_attention(tiny_model("gpt_oss", torch.float32, 0))
    assert plan.path == "prompt_copies"
    assert plan.reason == ("layer 0 passes s_aux to its attention, which the shared-prefix kernel does not implement")


def test_layers_outside_the_attention_interface_are_refused():
    plan = plan_attention(tiny_model("bloom", torch.float32, 0))
    assert plan.to_dict() == {"path": "prompt_copies",
                              "reason": "layers 0, 1 do not attend through transformers' attention interface "
                                        "with the model call's keywords"}


def test_a_cache_window_the_layer_does_not_pass_is_refused():
    """A config with a sliding window that its layers ignore: transformers' own cache keeps a
    window, so the shared path cannot know which keys the layer would see."""
    model = tiny_model("llama", torch.float32, 0)
    model.config.sliding_window = WINDOW
    plan = plan_attention(model)
    assert plan.path == "prompt_copies" and "keeps a 8-token window but the layer passes None" in plan.reason


def test_flash_or_other_stock_attention_is_refused_without_a_probe():
    model = tiny_model("llama", torch.float32, 0)
    model.config._attn_implementation = "flex_attention"
    assert plan_attention(model).path == "prompt_copies"


def test_softcapping_configs_load_with_eager():
    from transformers import AutoConfig

    assert stock_implementation(AutoConfig.for_model("gemma2")) == "eager"
    assert stock_implementation(AutoConfig.for_model("llama")) is None


def test_the_report_environment_names_the_attention_path():
    """Contract section 7: ``environment.attention`` is the generator's plan, as the backend chose it."""
    from diagnose.environment import fingerprint
    from diagnose.decode.backend import TransformersBackend
    from diagnose.decode.conformance import _IdsOnly

    backend = TransformersBackend(tiny_model("bloom", torch.float32, 0), _IdsOnly(), "cpu")
    plan = backend.choose_attention()
    assert not backend.shared_prefix
    env = fingerprint({"id": "tiny bloom", "attention": plan.to_dict()}, {"id": "e"}, "transformers")
    assert env["attention"]["path"] == "prompt_copies"
    assert env["attention"]["reason"].startswith("layers 0, 1 do not attend")
    assert "attention" not in fingerprint(None, {"id": "e"}, None)


def test_a_forward_without_keywords_is_refused(monkeypatch):
    model = tiny_model("llama", torch.float32, 0)
    forward = type(model).forward

    def strict(self, input_ids=None, cache=None, use_cache=None):
        return forward(self, input_ids=input_ids, cache=cache, use_cache=use_cache)

    monkeypatch.setattr(type(model), "forward", strict)
    plan = plan_attention(model)
    assert plan.path == "prompt_copies" and plan.reason.startswith("the model's forward does not pass keywords")
