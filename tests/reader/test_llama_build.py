"""The reader's llama.cpp build: one with AMX kernels is refused with a clear error, not a crash."""

from __future__ import annotations

import pytest

from diagnose.errors import ModelError
from diagnose.reader.llama import refuse_amx

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
