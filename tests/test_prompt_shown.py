"""The prompt the model saw is kept in the report and shown on the page and by `run --show-prompt`
(made-up case; fake model and tokenizer)."""

from __future__ import annotations

from pathlib import Path

import diagnose.cli as cli_module
from diagnose.case import Case, Document, SamplingSpec
from diagnose.decode.backend import PromptCounter
from diagnose.decode.fake import FakeBackend
from diagnose.html import render_report_html
from diagnose.inputs import InputSettings, analyze_inputs
from diagnose.report import PromptMessage, SamplingReport
from diagnose.sampling.stage import run_sampling
from tests.cli.invoke import invoke
from tests.factories import make_report, make_run
from tests.fakes import WordEmbedder

CASE = Case(id="tarrow", question="When does the Tarrow ferry leave?", system="Answer from the timetable.",
            documents=[Document(id="t1", text="The Tarrow ferry leaves at nine .")],
            sampling=SamplingSpec(seeds=2, temperatures=[0.7], max_new_tokens=2, top_k=0, top_p=1.0))
SEEN = "<|system|>Answer from the timetable.<|user|>Document [1] (id: t1)\nThe Tarrow ferry leaves at nine ."


def test_the_sampling_report_keeps_the_assembled_messages():
    fake = FakeBackend(["<eos>", "<unk>", "nine"], lambda history: [0.0, -9.0, 1.0])
    analysis = analyze_inputs(CASE, WordEmbedder(), InputSettings(), count_tokens=fake.count_tokens)
    sampling, _ = run_sampling(CASE, fake, [1, 2], WordEmbedder(), analysis)
    system, user = sampling.prompt
    assert (system.role, system.content) == ("system", "Answer from the timetable.")
    assert user.role == "user" and "The Tarrow ferry leaves at nine ." in user.content
    assert "When does the Tarrow ferry leave?" in user.content


class _Tokenizer:
    def decode(self, ids, skip_special_tokens: bool = True) -> str:
        return SEEN if not skip_special_tokens else SEEN.replace("<|system|>", "").replace("<|user|>", "")


def test_the_prompt_text_keeps_the_chat_template_tokens():
    assert PromptCounter(_Tokenizer(), 2048).text([5, 6, 7]) == SEEN


def _report():
    sampling = SamplingReport(runs=[make_run()], prompt=[PromptMessage(role="user", content="x")], prompt_text=SEEN)
    return make_report(sampling=sampling)


def test_the_report_page_shows_the_prompt_the_model_saw():
    page = render_report_html(_report())
    assert 'id="prompt"' in page and "&lt;|system|&gt;Answer from the timetable." in page
    assert "after the model&#39;s chat template" in page or "after the model's chat template" in page


def test_run_show_prompt_prints_it(monkeypatch, tmp_path: Path, capsys):
    case = tmp_path / "case.yaml"
    case.write_text("id: tarrow\nquestion: When does the Tarrow ferry leave?\ndocuments: []\n")

    class Diagnoser:
        def run(self, parsed, **kwargs):
            return _report()

    monkeypatch.setattr(cli_module, "_diagnoser", lambda progress, settings=None: Diagnoser())
    assert invoke(["run", str(case), "--show-prompt"]) == 0
    out = capsys.readouterr().out
    assert "prompt the model saw (after the model's chat template):" in out and SEEN in out
