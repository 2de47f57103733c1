"""``Diagnoser.run(repair=True)`` end to end on the fake model: report, findings, terminal lines, page."""

from __future__ import annotations

import json
from html.parser import HTMLParser

from diagnose.html import render_report_html
from diagnose.pipeline import Diagnoser
from diagnose.repair.lines import headline_lines, repair_lines
from diagnose.settings import Settings
from tests.contract import check_report
from tests.repair.contract_repairs import check_repairs
from tests.repair.fakes import WordEmbedder, backend, bridge_case


class FakeRegistry:
    """The registry's surface the pipeline uses, over the fake backend and embedder."""

    def __init__(self) -> None:
        self.backend = backend()
        self._embedder = WordEmbedder()

    def generator(self, name: str = "default"):
        return self.backend

    def prompt_counter(self, name: str = "default"):
        return self.backend

    def embedder(self):
        return self._embedder

    def embedder_identity(self) -> dict:
        return {"id": "words"}

    def reference_installed(self) -> bool:
        return False


def _run(case, **kwargs):
    registry = FakeRegistry()
    report = Diagnoser(Settings(), registry).run(case, read=False, **kwargs)
    return report, registry


def test_run_with_repair_reports_verified_repairs_best_first():
    case = bridge_case("1937", "1952")
    report, registry = _run(case, repair=True)
    data = json.loads(report.to_json())
    check_report(data, {"id": "bridge", "documents": [{"id": "d1"}, {"id": "d2"}],
                        "sampling": {"seeds": 16, "temperatures": [0.7, 1.2]}}, sampled=True)
    check_repairs(data)
    assert data["repairs"][0]["verdict"] == "fixes"
    assert data["repair"]["budget"] == 4 * 16 * 2
    # The original run, the determinism check's single row, the control, then one prefill per sampled candidate.
    assert registry.backend.prefills == 3 + len(data["repairs"])
    split = next(f for f in data["findings"] if f["rule"] == "sampling.split_center_pull")
    assert split["evidence"]["verified"]["repair"] == data["repairs"][0]["id"]
    # The verdict is the original's: a repair is advice, not a new diagnosis.
    assert data["verdict"] == "fail"


def test_the_summary_leads_with_the_best_verified_repair():
    report, _ = _run(bridge_case("1937", "1952"), repair=True)
    lead = headline_lines(report)
    assert lead == [f"repair: best verified repair: {report.repairs[0].id} ({report.repairs[0].summary}); 2 tried"]
    lines = repair_lines(report)
    assert lines[1].split()[:2] == ["fixes", f"{report.repairs[0].id}:"]
    assert "answer then:" in lines[2]


def test_without_repair_nothing_changes():
    plain, _ = _run(bridge_case("1937", "1952"))
    assert plain.repair is None and plain.repairs == [] and headline_lines(plain) == repair_lines(plain) == []
    assert "repairs" not in plain.to_dict()


def test_the_page_shows_each_repair_escaped_and_without_scripts():
    case = bridge_case("1937", "1952", system="<script>alert(1)</script> Answer from the documents.")
    report, _ = _run(case, repair=True)
    page = render_report_html(report)

    class Tags(HTMLParser):
        def __init__(self):
            super().__init__()
            self.tags, self.ids = [], set()

        def handle_starttag(self, tag, attrs):
            self.tags.append(tag)
            self.ids |= {v for k, v in attrs if k == "id"}

    parsed = Tags()
    parsed.feed(page)
    assert "script" not in parsed.tags
    assert {"repairs", "repair-list", "repair-0"} <= parsed.ids
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page  # the system prompt, inside the diff
    assert '<span class="badge fixes">fixes</span>' in page
    assert "best verified repair" in page.split('id="findings"')[0]  # in the page header, first
