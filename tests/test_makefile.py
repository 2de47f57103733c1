"""The set-up's build recipe, read with ``make -n`` (nothing is built)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def _reader_recipe(*variables: str) -> str:
    return subprocess.run(["make", "-n", "reader", *variables], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout


def test_the_reader_is_built_for_every_avx2_cpu_not_for_this_one():
    # the calibration is fitted on one build's greedy readings: every machine must read alike
    build = _reader_recipe().splitlines()[0]
    assert "-DGGML_NATIVE=OFF" in build
    assert "-mno-amx-tile" in build


def test_reader_native_builds_for_this_cpu_still_without_amx():
    build = _reader_recipe("READER_NATIVE=1").splitlines()[0]
    assert "GGML_NATIVE" not in build
    assert "-mno-amx-tile" in build
