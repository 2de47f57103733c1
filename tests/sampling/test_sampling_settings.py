"""The sampling stage's thresholds come from ``Settings.sampling`` and reach every measurement."""

from __future__ import annotations

import math


from diagnose.case import Case, Document, SamplingSpec
from diagnose.inputs import InputSettings, analyze_inputs
from diagnose.decode.engine import decode_rows, rows_for
from diagnose.decode.fake import FakeBackend
from diagnose.sampling.settings import SamplingSettings
from diagnose.sampling.stage import measure_run, run_sampling
from diagnose.settings import Settings
from tests.fakes import WordEmbedder

VOCAB = ["<eos>", "<unk>", "alpha", "beta"]


def _tied_then_stop(history: list[int]) -> list[float]:
    """"alpha" and "beta" exactly tied (raw top-2 margin 0), then the end."""
    if history and history[-1] in (2, 3):
        return [9.0, 0.0, 0.0, 0.0]
    return [-9.0, -9.0, 1.0, 1.0]


CASE = Case(
    id="settings", question="Which word?",
    documents=[Document(id="d0", text="gamma delta"), Document(id="d1", text="epsilon zeta")],
    sampling=SamplingSpec(seeds=16, temperatures=[1.0], max_new_tokens=3, top_k=0, top_p=1.0),
)


def _measure(settings: SamplingSettings | None = None):
    embedder = WordEmbedder()
    analysis = analyze_inputs(CASE, embedder, InputSettings())
    backend = FakeBackend(VOCAB, _tied_then_stop)
    traces = decode_rows(backend, [1], rows_for(CASE.sampling), CASE.sampling)
    if settings is None:
        return measure_run(CASE, backend, traces, embedder, analysis)
    return measure_run(CASE, backend, traces, embedder, analysis, settings=settings)


def test_settings_hold_the_sampling_group_with_the_former_literals():
    assert Settings().sampling == SamplingSettings()
    assert (SamplingSettings.meaning_similarity, SamplingSettings.pull_min_similarity,
            SamplingSettings.pull_min_margin, SamplingSettings.bifurcation_margin) == (0.85, 0.45, 0.03, 0.1)


def test_defaults_are_the_settings_defaults():
    assert _measure() == _measure(SamplingSettings())


def test_the_bifurcation_margin_reaches_the_run():
    texts = {s.text for s in _measure().samples}
    assert texts == {"alpha", "beta"}  # the seeds split at the tie
    assert [b.position for b in _measure().bifurcations] == [0]  # margin 0 < 0.1
    assert _measure(SamplingSettings(bifurcation_margin=0.0)).bifurcations == []  # 0 < 0 is false


def test_the_meaning_similarity_reaches_the_clusters():
    apart = _measure(SamplingSettings(pull_min_similarity=2.0))
    together = _measure(SamplingSettings(pull_min_similarity=2.0, meaning_similarity=-1.0))
    assert {s.center for s in apart.samples} == {"none"}  # no center is similar enough
    alphas = sum(s.text == "alpha" for s in apart.samples) / apart.n
    assert math.isclose(apart.semantic_entropy, -(alphas * math.log(alphas) + (1 - alphas) * math.log(1 - alphas)))
    assert together.semantic_entropy == 0.0 and {s.cluster for s in together.samples} == {0}


def test_the_pull_similarity_reaches_the_attribution():
    nothing_close = _measure(SamplingSettings(pull_min_similarity=2.0))
    assert nothing_close.center_pull["none"] == 1.0


def test_run_sampling_passes_the_settings_down():
    embedder = WordEmbedder()
    analysis = analyze_inputs(CASE, embedder, InputSettings())
    backend = FakeBackend(VOCAB, _tied_then_stop)
    report, _ = run_sampling(CASE, backend, [1], embedder, analysis,
                             settings=SamplingSettings(bifurcation_margin=0.0))
    assert report.runs[0].bifurcations == []
    report, _ = run_sampling(CASE, backend, [1], embedder, analysis)
    assert [b.position for b in report.runs[0].bifurcations] == [0]


def test_the_server_key_is_read_in_one_place(monkeypatch):
    from diagnose.settings import OPENAI_API_KEY_VARIABLE, openai_api_key

    assert OPENAI_API_KEY_VARIABLE == "DIAGNOSE_OPENAI_API_KEY"
    assert openai_api_key({"DIAGNOSE_OPENAI_API_KEY": "sk-test"}) == "sk-test"
    assert openai_api_key({}) is None
    monkeypatch.setenv("DIAGNOSE_OPENAI_API_KEY", "sk-env")
    assert openai_api_key() == "sk-env"
    assert "sk-env" not in repr(Settings.from_env())  # a secret is no setting
