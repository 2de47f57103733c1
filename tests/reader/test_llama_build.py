"""The reader's llama.cpp build: one with AMX kernels is refused with a clear error, not a crash;
what it was built for is named, and is the build the reference calibration read."""

from __future__ import annotations

import pytest

from diagnose.errors import ModelError
from diagnose.reader.llama import build_kernels, refuse_amx

WITH_AMX = "CPU : SSE3 = 1 | AVX2 = 1 | AVX512 = 1 | AVX512_VNNI = 1 | AMX_INT8 = 1 | OPENMP = 1 | "
WITHOUT = "CPU : SSE3 = 1 | AVX2 = 1 | AVX512 = 1 | AVX512_VNNI = 1 | OPENMP = 1 | "


def test_a_build_with_amx_kernels_is_refused_with_the_way_out():
    with pytest.raises(ModelError, match="make reader"):
        refuse_amx(WITH_AMX)


def test_a_build_without_them_passes():
    refuse_amx(WITHOUT)
    refuse_amx(WITHOUT.replace("OPENMP", "AMX_INT8 = 0 | OPENMP"))


def test_the_installed_build_has_no_amx_kernels():
    llama_cpp = pytest.importorskip("llama_cpp")
    refuse_amx(llama_cpp.llama_print_system_info().decode(errors="replace"))


def test_build_kernels_lists_the_features_set_in_the_line_order():
    assert build_kernels(WITH_AMX) == "SSE3 AVX2 AVX512 AVX512_VNNI AMX_INT8 OPENMP"
    assert build_kernels("CPU : AVX = 1 | AVX2 = 0 | AVX512 = 0 | FMA = 1 | ") == "AVX FMA"


def test_the_installed_build_is_one_the_reference_calibration_was_fitted_on():
    """`make setup` builds the portable reader; its readings are the ones the shipped reference
    calibration read (a build for other CPU features reads some documents differently)."""
    llama_cpp = pytest.importorskip("llama_cpp")
    from diagnose.inputs.calibration import ConflictCalibration

    kernels = build_kernels(llama_cpp.llama_print_system_info().decode(errors="replace"))
    assert ConflictCalibration.shipped("reference").fitted_on(kernels), (
        f"llama-cpp-python is built for {kernels!r}: rebuild it with `make reader`")
