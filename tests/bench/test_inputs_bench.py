"""The input-stage benchmark on a fake encoder: passes, cache use, reports, scoring."""

from __future__ import annotations

import json

import numpy as np
import yaml

from diagnose.bench.inputs import InputsBenchResult, run_inputs_bench
from diagnose.embedding import CachedEmbedder
from diagnose.inputs.settings import InputSettings


class FakeModel:
    """A fake SentenceTransformer: one bag-of-characters vector per text; logs its calls."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def encode(self, texts, batch_size=32, convert_to_numpy=True, show_progress_bar=False):
        self.calls.append(len(texts))
        out = np.zeros((len(texts), 26), dtype=np.float32)
        for i, text in enumerate(texts):
            for c in text.lower():
                if "a" <= c <= "z":
                    out[i, ord(c) - 97] += 1
        return out + 1e-3

    def get_embedding_dimension(self) -> int:
        return 26


def _write_cases(folder, n=3):
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for k in range(n):
        case = {
            "id": f"case-{k}",
            "question": f"What is the population of Town{k}?",
            "documents": [
                {"id": "d0", "text": f"Town{k} is a town. The population was 4,411 at the 2010 census."},
                {"id": "d1", "text": f"Town{k} is a town. The population was 10,000 at the 2010 census."},
                {"id": "d2", "text": "Privacy policy About Wikipedia Disclaimers Contact Wikipedia Cookie statement"},
            ],
        }
        if k == 1:  # the bench reads YAML cases as `diagnose run` does
            path = folder / f"case-{k}.yaml"
            path.write_text(yaml.safe_dump(case), "utf-8")
        else:
            path = folder / f"case-{k}.json"
            path.write_text(json.dumps(case), "utf-8")
        paths.append(path)
    return paths


def test_bench_times_three_passes_and_writes_reports(tmp_path):
    model = FakeModel()
    seen = []
    result = run_inputs_bench(
        _write_cases(tmp_path / "cases"), tmp_path / "out",
        lambda cache: CachedEmbedder(model, cache, name="fake"), InputSettings(),
        on_case=lambda cid, rep: seen.append((cid, rep["verdict"])),
    )
    assert isinstance(result, InputsBenchResult)
    assert (result.cases, result.docs, result.texts) == (3, 9, 12)
    # warm-up; raw: all 12 document and question texts; cold: the distinct sentences (3 "Town{k} is a
    # town.", the 2 census sentences every case shares, the boilerplate) + 3 questions; warm: none
    assert model.calls == [1, 12, 9]
    assert result.cold_embedded == 9 and result.warm_embedded == 0
    assert seen == [("case-0", "ok"), ("case-1", "ok"), ("case-2", "ok")]
    report = json.loads((tmp_path / "out" / "case-1.json").read_text("utf-8"))
    assert set(report) == {"case_id", "verdict", "input", "findings", "environment"}
    assert report["case_id"] == "case-1" and report["findings"] == [] and report["environment"] == {}
    assert {"gravity_centers", "noise_documents", "conflict"} <= set(report["input"])
    last = result.lines()[-1]
    assert last.startswith("INPUTS cases=3 docs=9 stage_s=")
    for key in ("raw_encoder_s=", "ratio=", "warm_s=", "cases_per_s="):
        assert key in last
    assert result.score_line is None


def test_bench_scores_through_a_subprocess_when_the_scorer_exists(tmp_path):
    scorer = tmp_path / "score.py"
    scorer.write_text(
        "import sys, os\nprint('cases', len(os.listdir(sys.argv[2])))\nprint('SCORE ari=1.0000 missing=0')\n", "utf-8"
    )
    truth = tmp_path / "truth.jsonl"
    truth.write_text("", "utf-8")
    factory = lambda cache: CachedEmbedder(FakeModel(), cache, name="fake")  # noqa: E731
    cases = _write_cases(tmp_path / "cases", 2)
    result = run_inputs_bench(cases, None, factory, InputSettings(), truth=truth, scorer=scorer)
    assert result.score_line == "SCORE ari=1.0000 missing=0"
    assert "cases 2" in result.score_output and result.reports == []
    assert result.lines()[-3] == result.score_line
    assert result.lines()[-2].startswith("PULL self_attribution=")
    missing = run_inputs_bench(cases, None, factory, InputSettings(), truth=truth, scorer=tmp_path / "absent.py")
    assert missing.score_line is None
