"""``diagnose check-engine`` (contract section 7): one line per family, a summary, exit 1 when wrong."""

from __future__ import annotations

import re

import pytest
import torch

from tests.cli.invoke import invoke

LINE = re.compile(
    r"^ENGINE family=(\S+) path=(shared_prefix|prompt_copies) exact=(true|false) rows_same=(\d+)/(\d+) "
    r"max_dlogprob=(\S+)(?: vs_float32=\S+ stock_vs_float32=\S+)? reason=\"[^\"]+\"$"
)
LAST = re.compile(r"^ENGINE families=(\d+) exact=(\d+) refused=(\d+) wrong=(\d+) skipped=(\d+)$")
FAMILIES = ["llama", "mistral", "gemma2", "gpt_oss", "bloom", "bert"]


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
    assert set(engine) == {"llama", "mistral", "gemma2", "gpt_oss", "bloom"}
    for name in ("llama", "mistral", "gemma2", "gpt_oss"):  # windows, softcapping, sinks: all implemented
        assert engine[name].group(2, 3) == ("shared_prefix", "true"), lines
        assert float(engine[name].group(6)) <= 1e-4
    assert engine["bloom"].group(2, 3) == ("prompt_copies", "true")
    assert any(line.startswith("SKIPPED family=bert reason=") for line in lines)
    assert LAST.match(lines[-1]).groups() == ("5", "4", "1", "0", "1")


def test_a_wrong_family_exits_1(monkeypatch, capsys):
    """Softcapping dropped from the kernel: Gemma 2's rows differ, and the command says so."""
    from diagnose.sampling import shared_prefix

    monkeypatch.setattr(shared_prefix, "_capped", lambda scores, softcap: scores)
    assert invoke(["check-engine", "--family", "gemma2"]) == 1
    out = capsys.readouterr().out
    assert "ENGINE family=gemma2 path=shared_prefix exact=false" in out
    assert out.strip().splitlines()[-1] == "ENGINE families=1 exact=0 refused=0 wrong=1 skipped=0"


def test_half_precision_is_judged_against_float32_arithmetic(capsys):
    """In bfloat16 the engine must be no further from float32 arithmetic on the same weights than
    the stock attention is; with the window ignored it is much further."""
    from diagnose.sampling import shared_prefix

    assert invoke(["check-engine", "--dtype", "bfloat16", "--family", "mistral"]) == 0
    line = capsys.readouterr().out.splitlines()[0]
    assert LINE.match(line) and "exact=true" in line and " vs_float32=" in line
    original = shared_prefix.shared_prefix_attention

    def windowless(*args, sliding_window=None, **kwargs):
        return original(*args, **kwargs)

    try:
        shared_prefix.shared_prefix_attention = windowless
        assert invoke(["check-engine", "--dtype", "bfloat16", "--family", "mistral"]) == 1
    finally:
        shared_prefix.shared_prefix_attention = original
    assert "exact=false" in capsys.readouterr().out


def test_an_unknown_family_is_a_usage_error():
    assert invoke(["check-engine", "--family", "no-such-family"]) == 2


def test_every_family_of_the_installed_transformers_is_exact_or_refused(capsys):
    """The whole sweep (about 45 s of CPU on one thread: 90 families checked, the rest skipped)."""
    assert invoke(["check-engine"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    families, exact, refused, wrong, skipped = map(int, LAST.match(lines[-1]).groups())
    assert wrong == 0 and families == exact + refused and families >= 80
    assert families + skipped == len(lines) - 1
