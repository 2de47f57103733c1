"""``dev_sets --setting NAME=VALUE``: one threshold under trial, typed like the field it replaces; a
readings cache is kept to the reader build that wrote it."""

import argparse

import pytest

from diagnose.bench.dev_sets import _overridden
from diagnose.inputs.settings import InputSettings


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    parser.exit = lambda status=0, message=None: (_ for _ in ()).throw(SystemExit(message))  # keep the message
    return parser


def test_each_setting_is_cast_to_its_fields_type():
    out = _overridden(InputSettings(), ["noise_relevance=0.42", "seed=7"], _parser())
    assert out.noise_relevance == pytest.approx(0.42) and isinstance(out.noise_relevance, float)
    assert out.seed == 7 and isinstance(out.seed, int)
    assert out.relative_relevance == InputSettings().relative_relevance  # the rest untouched


@pytest.mark.parametrize("pair, named", [
    ("no_such_field=1", "no_such_field"),
    ("noise_relevance", "noise_relevance"),
    ("seed=many", "'many' is not of type int"),
])
def test_a_bad_setting_is_refused_by_name(pair, named):
    with pytest.raises(SystemExit, match=named):
        _overridden(InputSettings(), [pair], _parser())


def test_a_readings_cache_of_another_reader_build_is_refused(tmp_path):
    import json
    from types import SimpleNamespace

    from diagnose.bench.dev_sets import _CachedReader
    from diagnose.reader.structured import ReaderIdentity

    def reader(kernels):
        return SimpleNamespace(decides=True, identity=ReaderIdentity("r", "reference", None, kernels))

    cache = tmp_path / "readings.json"
    cache.write_text(json.dumps({"kernels": "AVX AVX2 FMA", "ab": 0.5}), encoding="utf-8")
    assert _CachedReader(reader("AVX AVX2 FMA"), cache).memo["ab"] == 0.5
    with pytest.raises(SystemExit, match="AVX AVX2 AVX512 FMA"):
        _CachedReader(reader("AVX AVX2 AVX512 FMA"), cache)
