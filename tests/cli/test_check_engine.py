"""``diagnose check-engine`` (contract section 7): one line per family, a summary, exit 1 when wrong."""

from __future__ import annotations

import re

import pytest
import torch

from tests.cli.invoke import invoke

LINE = re.compile(
    r"^ENGINE family=(\S+) path=(shared_prefix|prompt_copies) exact=(true|false) rows_same=(\d+)/(\d+) "
    r"max_dlogprob=(\S+)(?: kernel_ulps=(\S+) stock_kernel_ulps=(\S+))? reason=\"[^\"]+\"$"
)
LAST = re.compile(r"^ENGINE families=(\d+) exact=(\d+) refused=(\d+) wrong=(\d+) skipped=(\d+)$")
FAMILIES = ["llama", "mistral", "gemma2", "gpt_oss", "bloom", "bert", "gpt_neox"]


@pytest.fixture(autouse=True)
def _keep_threads():
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


def test_a_handful_of_families_are_exact_or_refused(capsys):
    args = ["check-engine"] + [f"--family={name}" for name in FAMILIES]
    assert invoke(args) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    engine = {m.group(1): m for m in map(LINE.match, lines) if m}
    assert set(engine) == {"llama", "mistral", "gemma2", "gpt_oss", "bloom", "gpt_neox"}
    # windows, softcapping, sinks: all implemented; GPT-NeoX's config says is_decoder=False, as BERT's does
    for name in ("llama", "mistral", "gemma2", "gpt_oss", "gpt_neox"):
        assert engine[name].group(2, 3) == ("shared_prefix", "true"), lines
        assert float(engine[name].group(6)) <= 1e-4
    assert engine["bloom"].group(2, 3) == ("prompt_copies", "true")
    assert any(line.startswith("SKIPPED family=bert reason=\"a bidirectional encoder") for line in lines)
    assert LAST.match(lines[-1]).groups() == ("6", "5", "1", "0", "1")


def test_a_wrong_family_exits_1(monkeypatch, capsys):
    """Softcapping dropped from the kernel: Gemma 2's rows differ, and the command says so."""
    from diagnose.decode import shared_prefix

    monkeypatch.setattr(shared_prefix, "_capped", lambda scores, softcap: scores)
    assert invoke(["check-engine", "--family", "gemma2"]) == 1
    out = capsys.readouterr().out
    assert "ENGINE family=gemma2 path=shared_prefix exact=false" in out
    assert out.strip().splitlines()[-1] == "ENGINE families=1 exact=0 refused=0 wrong=1 skipped=0"


def test_half_precision_judges_the_kernel_against_exact_arithmetic(capsys):
    """In bfloat16 the engine's attention, on the same inputs as the stock one, must be correctly
    rounded or no worse than the stock kernel; with the window ignored it is far off."""
    from diagnose.decode import shared_prefix
    from diagnose.decode.conformance import KERNEL_ULPS

    assert invoke(["check-engine", "--dtype", "bfloat16", "--family", "mistral"]) == 0
    line = capsys.readouterr().out.splitlines()[0]
    match = LINE.match(line)
    assert match and "exact=true" in line
    engine_ulps, stock_ulps = float(match.group(7)), float(match.group(8))
    assert engine_ulps <= max(stock_ulps, KERNEL_ULPS)
    original = shared_prefix.shared_prefix_attention

    def windowless(*args, sliding_window=None, **kwargs):
        return original(*args, **kwargs)

    try:
        shared_prefix.shared_prefix_attention = windowless
        assert invoke(["check-engine", "--dtype", "bfloat16", "--family", "mistral"]) == 1
    finally:
        shared_prefix.shared_prefix_attention = original
    line = capsys.readouterr().out.splitlines()[0]
    assert "exact=false" in line and float(LINE.match(line).group(7)) > 10


def test_a_prefix_rounded_to_half_precision_before_the_merge_is_wrong(monkeypatch, capsys):
    """The prefix attention run in bfloat16 rounds twice (its output, then the merged one): about
    one unit in the last place where the stock kernel is within half of one. The check sees it."""
    from diagnose.decode import shared_prefix

    original = shared_prefix._fused_prefix_attention

    def in_bfloat16(q, keys, values, scale):
        out, lse = original(q.bfloat16(), keys.bfloat16(), values.bfloat16(), scale)
        return out.float(), lse.float()

    monkeypatch.setattr(shared_prefix, "_fused_prefix_attention", in_bfloat16)
    assert invoke(["check-engine", "--dtype", "bfloat16", "--family", "llama"]) == 1
    line = capsys.readouterr().out.splitlines()[0]
    assert "exact=false" in line and 0.75 < float(LINE.match(line).group(7)) < 2


def test_hybrid_recurrent_families_decode_with_prompt_copies(capsys):
    """Mamba layers keep a recurrent state, not keys and values: refused, with the reason, and sampled
    through prompt copies (the cache's rows copied and selected whatever the layer kind)."""
    assert invoke(["check-engine", "--family", "jamba", "--family", "mamba"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    for line in lines[:2]:
        match = LINE.match(line)
        assert match and match.group(2, 3) == ("prompt_copies", "true"), line
        assert "LinearAttentionLayer, not plain keys and values" in line
    assert lines[-1] == "ENGINE families=2 exact=0 refused=2 wrong=0 skipped=0"


def test_an_unknown_family_is_a_usage_error():
    assert invoke(["check-engine", "--family", "no-such-family"]) == 2


def test_every_family_of_the_installed_transformers_is_exact_or_refused(capsys):
    """The whole sweep (about 45 s of CPU on one thread: 90 families checked, the rest skipped)."""
    assert invoke(["check-engine"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    families, exact, refused, wrong, skipped = map(int, LAST.match(lines[-1]).groups())
    assert wrong == 0 and families == exact + refused and families >= 80
    assert families + skipped == len(lines) - 1
