"""``run`` decides its findings against a control unless told ``--no-controls``."""

from __future__ import annotations

import pytest

import diagnose.cli as cli_module
from tests.cli.invoke import invoke
from tests.cli.test_exit_codes import FakeDiagnoser, case_file  # noqa: F401  (fixture)


class RecordingDiagnoser(FakeDiagnoser):
    def __init__(self) -> None:
        super().__init__("ok")
        self.calls: list[dict] = []

    def run(self, case, **kwargs):
        self.calls.append(kwargs)
        return super().run(case, **kwargs)


@pytest.mark.parametrize("flags, controls", [([], True), (["--no-controls"], False)])
def test_controls_are_on_by_default(flags, controls, case_file, monkeypatch):  # noqa: F811
    diagnoser = RecordingDiagnoser()
    monkeypatch.setattr(cli_module, "_diagnoser", lambda progress, settings=None: diagnoser)
    assert invoke(["run", str(case_file), "--json", *flags]) == 0
    assert diagnoser.calls[0]["controls"] is controls
