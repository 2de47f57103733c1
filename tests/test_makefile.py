"""The set-up's build recipe, read with ``make -n`` (nothing is built)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def _build_line(*variables: str) -> str:
    """The recipe's llama.cpp build command (under ``make test`` the outer make's flags are
    dropped, so that ``make -n`` prints only the recipe)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    out = subprocess.run(["make", "--no-print-directory", "-n", "reader", *variables], cwd=ROOT, env=env,
                         capture_output=True, text=True, check=True).stdout
    return next(line for line in out.splitlines() if "CMAKE_ARGS=" in line)


def test_the_reader_is_built_for_every_avx2_cpu_not_for_this_one():
    # the calibration is fitted on one build's greedy readings: every machine must read alike
    build = _build_line()
    assert "-DGGML_NATIVE=OFF" in build
    assert "-mno-amx-tile" in build


def test_reader_native_builds_for_this_cpu_still_without_amx():
    build = _build_line("READER_NATIVE=1")
    assert "GGML_NATIVE" not in build
    assert "-mno-amx-tile" in build
