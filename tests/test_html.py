"""The static HTML report page: sections, escaping, self-containment, empty inputs."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import msgspec
import pytest
from markupsafe import escape

from diagnose.html import render_report_html
from diagnose.report import (
    Bifurcation,
    Conflict,
    ConflictPair,
    DocumentView,
    Finding,
    GravityCenter,
    InputReport,
    Report,
    Sample,
    SamplingReport,
    TemperatureRun,
)
from tests.factories import make_report

XSS = "<script>alert(1)</script>"


class _Collector(HTMLParser):
    """Records every start tag with its attributes, and the ids seen."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def ids(self) -> set[str]:
        return {a["id"] for _, a in self.tags if a.get("id")}

    def with_class(self, tag: str, cls: str) -> list[dict[str, str | None]]:
        return [a for t, a in self.tags if t == tag and cls in (a.get("class") or "").split()]


def _parse(page: str) -> _Collector:
    parser = _Collector()
    parser.feed(page)
    parser.close()
    return parser


def _input(doc_ids: list[str] | None = None, center_label: str = "Paris") -> InputReport:
    ids = doc_ids or ["d1", "d2", "d3", "d4"]
    return InputReport(
        gravity_centers=[
            GravityCenter(id="c0", documents=[ids[0], ids[1]], mass=0.67, label=center_label),
            GravityCenter(id="c1", documents=[ids[2]], mass=0.33, label="Lyon"),
        ],
        noise_documents=[ids[3]],
        conflict=Conflict(
            detected=True,
            score=0.8,
            pairs=[ConflictPair(a=ids[0], b=ids[2], kind="value_mismatch", evidence=f"'Paris' vs 'Lyon' {XSS}")],
        ),
        documents=[
            DocumentView(id=ids[0], center="c0", relevance=0.9, tokens=40, position=[0.1, 0.2]),
            DocumentView(id=ids[1], center="c0", relevance=0.8, tokens=35, position=[0.2, 0.1]),
            DocumentView(id=ids[2], center="c1", relevance=0.7, tokens=50, position=[-0.5, 0.4]),
            DocumentView(id=ids[3], center=None, relevance=0.1, tokens=12, position=[0.9, -0.9]),
        ],
        prompt_tokens=300,
        context_window=4096,
    )


def _run(temperature: float, text: str = "Paris.") -> TemperatureRun:
    samples = [
        Sample(seed=0, text=text, finish_reason="stop", tokens=3, cluster=0, center="c0", position=[0.1, 0.2]),
        Sample(seed=1, text="Lyon.", finish_reason="length", tokens=8, cluster=1, center="c1", position=[-0.4, 0.3]),
        Sample(seed=2, text="Unsure.", finish_reason="stop", tokens=4, cluster=1, center="none", compliant=False,
               position=[0.5, -0.2]),
    ]
    return TemperatureRun(
        temperature=temperature,
        n=3,
        first_token_divergence=0.667,
        mean_entropy=1.25,
        perplexity=3.5,
        repetition_rate=0.0,
        semantic_entropy=0.64,
        compliance_rate=0.667,
        truncation_rate=0.333,
        center_pull={"c0": 0.34, "c1": 0.33, "none": 0.33},
        samples=samples,
        first_tokens={" Paris": 1, "Lyon": 1, XSS: 1},
        entropy_by_position=[0.2, 1.4, 0.6, 0.3],
        bifurcations=[Bifurcation(position=1, context="The capital is", candidates=[" Paris", " Lyon"], margin=0.02)],
    )


def _report(*, sampling: bool = True, doc_ids: list[str] | None = None, **texts: str) -> Report:
    return Report(
        case_id="capital-of-france",
        verdict="fail",
        input=_input(doc_ids, texts.get("center_label", "Paris")),
        findings=[
            Finding(
                stage="input",
                rule="input.competing_centers",
                severity="fail",
                evidence={"centers": ["c0", "c1"], "note": texts.get("evidence", "two answers")},
                advice="Remove or reconcile the documents of the weaker center.",
            ),
            Finding(stage="sampling", rule="sampling.low_agreement", severity="warn", evidence={}, advice="Lower T."),
        ],
        environment={"model": "tiny-gpt", "dtype": "float32", "device": "cpu", "versions": {"torch": "2.13.0"}},
        sampling=SamplingReport(runs=[_run(0.3, texts.get("sample", "Paris.")), _run(1.0)], backend="fake")
        if sampling
        else None,
    )


def _empty_report() -> Report:
    return make_report("ok", "empty", sampling=SamplingReport(runs=[]))


def test_key_sections_present() -> None:
    page = render_report_html(_report())
    assert page.lstrip().startswith("<!DOCTYPE html>")
    parser = _parse(page)
    assert {"findings", "input", "document-map", "centers", "pairs", "sampling", "metrics", "environment"} <= parser.ids()
    assert {"run-0", "run-1"} <= parser.ids()
    assert parser.with_class("span", "badge")[0]["class"] == "badge fail"
    for metric in ("first_token_divergence", "semantic_entropy", "truncation_rate", "perplexity"):
        assert metric in page
    assert "input.competing_centers" in page and "sampling.low_agreement" in page
    assert page.index('id="findings"') < page.index('id="input"') < page.index('id="sampling"')
    assert page.index('id="sampling"') < page.index('id="environment"')
    assert len(parser.with_class("line", "bifurcation")) == 2
    assert len(parser.with_class("div", "sample")) == 6
    assert "&#34;torch&#34;: &#34;2.13.0&#34;" in page  # nested environment value as JSON


def test_csp_meta_forbids_everything_but_inline_style() -> None:
    parser = _parse(render_report_html(_report()))
    csp = [a for t, a in parser.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    assert csp and csp[0]["content"] == "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


@pytest.mark.parametrize("where", ["doc_id", "sample", "center_label", "evidence"])
def test_untrusted_text_is_escaped(where: str) -> None:
    if where == "doc_id":
        report = _report(doc_ids=[XSS, "d2", "d3", "d4"])
    else:
        report = _report(**{where: XSS})
    page = render_report_html(report)
    assert "&lt;script&gt;" in page
    assert "<script" not in page.lower()


def test_escaped_text_reads_back_as_text() -> None:
    class _Text(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.chunks: list[str] = []

        def handle_data(self, data: str) -> None:
            self.chunks.append(data)

    parser = _Text()
    parser.feed(render_report_html(_report(sample=XSS)))
    assert any(XSS in chunk for chunk in parser.chunks)


def test_no_off_page_references() -> None:
    for report in (_report(), _report(sampling=False), _empty_report()):
        page = render_report_html(report)
        assert not re.search(r"https?://", page)
        assert "@import" not in page and "url(" not in page
        for tag, attrs in _parse(page).tags:
            for name in ("src", "href", "xlink:href", "action", "srcset"):
                value = attrs.get(name)
                if value is not None:
                    assert value.startswith(("#", "data:")), (tag, name, value)
        assert all(tag not in {"script", "iframe", "object", "embed", "link"} for tag, _ in _parse(page).tags)


def test_inputs_only_report_renders() -> None:
    page = render_report_html(_report(sampling=False))
    ids = _parse(page).ids()
    assert {"findings", "input", "environment"} <= ids
    assert "sampling" not in ids
    assert "not run (inputs only)" in page


def test_empty_report_renders() -> None:
    page = render_report_html(_empty_report())
    parser = _parse(page)
    assert {"findings", "input", "environment", "sampling"} <= parser.ids()
    assert parser.with_class("circle", "doc-point") == []
    assert "No findings." in page and "No gravity centers." in page and "No temperature runs." in page


def test_run_with_zero_samples_renders() -> None:
    report = _report()
    assert report.sampling is not None
    report.sampling.runs[0].samples = []
    report.sampling.runs[0].first_tokens = {}
    report.sampling.runs[0].entropy_by_position = []
    page = render_report_html(report)
    assert "No samples." in page


def test_document_map_has_one_point_per_document() -> None:
    report = _report()
    points = _parse(render_report_html(report)).with_class("circle", "doc-point")
    assert len(points) == len(report.input.documents)
    noise = [p for p in points if p["fill"] == "#9aa0a6"]
    assert len(noise) == 1
    assert len({p["fill"] for p in points}) == 3


def test_degenerate_positions_do_not_break_the_map() -> None:
    report = _report()
    report.input.documents[0].position = []
    report.input.documents[1].position = [float("nan"), float("inf")]
    page = render_report_html(report)
    points = _parse(page).with_class("circle", "doc-point")
    assert len(points) == 4
    assert all(re.fullmatch(r"-?\d+(\.\d+)?", p["cx"] or "") for p in points)


def test_ablation_and_unavailable_metrics_render():
    from diagnose.report import AblationRun

    report = _report()
    run = report.sampling.runs[0]
    run.mean_entropy, run.perplexity, run.unavailable = None, None, ["mean_entropy", "perplexity"]
    report.sampling.ablation = [
        AblationRun(variant="no_documents", documents=[], temperature=0.7, mean_entropy=1.5,
                    semantic_entropy=1.1, first_token_divergence=0.5, center_pull={"none": 1.0}),
    ]
    html = render_report_html(report)
    assert 'id="ablation"' in html and "no_documents" in html
    assert "n/a" in html


def test_document_map_has_one_diamond_per_placed_sample() -> None:
    report = _report()
    page = render_report_html(report)
    marks = _parse(page).with_class("polygon", "sample-point")
    assert len(marks) == sum(len(run.samples) for run in report.sampling.runs) == 6
    # Colored by the followed center: c0, c1 from the palette, "none" neutral gray, per run.
    assert [m["fill"] for m in marks] == ["#3b6ea8", "#e08a2c", "#9aa0a6"] * 2
    assert "sampled output (6, all temperatures)" in page
    assert page.count('class="swatch diamond"') == 1


def test_a_sample_at_a_document_position_is_drawn_on_that_document() -> None:
    parser = _parse(render_report_html(_report()))
    d1 = parser.with_class("circle", "doc-point")[0]
    seed0 = parser.with_class("polygon", "sample-point")[0]
    corners = [tuple(map(float, c.split(","))) for c in (seed0["points"] or "").split()]
    centre = (sum(x for x, _ in corners) / 4, sum(y for _, y in corners) / 4)
    assert centre == pytest.approx((float(d1["cx"] or 0), float(d1["cy"] or 0)), abs=0.06)


def test_sample_tooltip_gives_temperature_seed_and_escaped_snippet() -> None:
    text = XSS + " " + "x" * 200
    page = render_report_html(_report(sample=text))
    titles = re.findall(r'<polygon class="sample-point"[^>]*><title>(.*?)</title>', page)
    snippet = text[:79] + "…"  # the first 80 characters
    assert titles[0] == "T=0.3 · seed 0 · c0 · " + str(escape(snippet))
    assert titles[0].count("&lt;script&gt;") == 1
    assert "<script" not in page.lower()


def test_samples_without_a_position_are_not_drawn() -> None:
    report = _report()
    for run in report.sampling.runs:
        for sample in run.samples:
            sample.position = []
    page = render_report_html(report)
    assert _parse(page).with_class("polygon", "sample-point") == []
    assert "sampled output" not in page


def test_mass_and_pull_side_by_side_per_temperature() -> None:
    page = render_report_html(_report())
    table = page[page.index('id="mass-vs-pull"') : page.index("</table>", page.index('id="mass-vs-pull"'))]
    assert "pull T=0.3" in table and "pull T=1" in table
    cells = re.findall(r'<td class="num">([^<]*)</td>', table)
    # c0, c1, none: mass, then pull at each of the two temperatures.
    assert cells == ["0.67", "0.34", "0.34", "0.33", "0.33", "0.33", "—", "0.33", "0.33"]


def test_documents_table_shows_each_claim_and_in_the_read_tier_each_documents_own_answer() -> None:
    import msgspec

    inp = _input()
    docs = [msgspec.structs.replace(d, answer="Paris", claim=f"The capital is Paris {XSS}") for d in inp.documents]
    static = render_report_html(Report(case_id="t", verdict="warn", input=msgspec.structs.replace(inp, documents=docs),
                                       findings=[], environment={"x": 1}))
    assert "documents" in _parse(static).ids() and str(escape(f"The capital is Paris {XSS}")) in static
    assert "read alone" not in static and "the text alone" in static
    docs = [msgspec.structs.replace(d, read_answer="Lyon.", yes_margin=-1.25) for d in docs]
    read = render_report_html(Report(case_id="t", verdict="warn", input=msgspec.structs.replace(
        inp, documents=docs, tier="read"), findings=[], environment={"x": 1}))
    assert "read alone" in read and "Lyon. (yes margin -1.25)" in read


def _repaired_report() -> Report:
    from diagnose.report import Repair, RepairAnswer, RepairOverview, RepairRun, RepairTest, SkippedRepair

    test = RepairTest(metric="center_split", role="target", test="fisher_exact", before=0.5, after=0.0, diff=-0.5,
                      p=0.0001, p_adjusted=0.0004, min_change=0.2, outcome="better")
    repairs = [
        Repair(id="remove_center:c1", change={"kind": "remove_center", "center": "c1", "removed": ["d3"]},
               diff=f"--- a.yaml\n+++ a.yaml (remove_center:c1)\n-- id: d3\n-  text: {XSS}\n", verdict="fixes",
               runs=[RepairRun(temperature=0.3, after_temperature=0.3, before={"center_split": 0.5},
                               after={"center_split": 0.0}, p={"center_split": 0.0286})],
               answers=["input.competing_centers"], resolved=True, tests=[test], samples=8,
               answer=RepairAnswer(text=XSS, share=1.0, center="c0", label="Paris", center_share=1.0),
               note="Removing documents hides a conflict.", summary="fixes: center split 50% → 0% at T 0.3"),
        Repair(id="disagreement_instruction", change={"kind": "disagreement_instruction"}, diff="", verdict="worse",
               runs=[], summary="worse: compliance 100% → 0% at T 0.3"),
    ]
    skipped = [SkippedRepair(id="pin_parameters", change={"kind": "pin_parameters"}, diff="", answers=[],
                             samples=8, reason="needs 8 samples; 0 of the budget of 16 left")]
    overview = RepairOverview(budget=16, default_budget=16, spent=16, tests=4, alpha=0.05, best="remove_center:c1",
                              headline="best verified repair: remove_center:c1", batching="one batch per candidate")
    return msgspec.structs.replace(_report(), repairs=repairs, repairs_skipped=skipped, repair=overview)


def test_repairs_section_shows_each_candidate_escaped() -> None:
    page = render_report_html(_repaired_report())
    parser = _parse(page)
    assert {"repairs", "repair-list", "repair-0", "repair-1", "repairs-skipped"} <= parser.ids()
    assert page.index('id="findings"') < page.index('id="repairs"') < page.index('id="input"')
    assert [a["class"] for a in parser.with_class("span", "fixes")][:1] == ["badge fixes"]
    assert parser.with_class("span", "worse")
    assert XSS not in page and str(escape(XSS)) in page  # in the diff and in the answer
    assert "needs 8 samples; 0 of the budget of 16 left" in page
    assert "best verified repair: remove_center:c1" in page.split('id="findings"')[0]
    assert not [t for t, _ in parser.tags if t == "script"]


def test_a_report_without_repairs_has_no_repairs_section() -> None:
    page = render_report_html(_report())
    assert 'id="repairs"' not in page and "Repairs" not in page


def test_documents_table_shows_the_cases_authority_and_date_marks_only_when_given() -> None:
    import msgspec

    inp = _input()
    plain = render_report_html(Report(case_id="t", verdict="warn", input=inp, findings=[], environment={"x": 1}))
    assert "authority · date" not in plain
    docs = [msgspec.structs.replace(inp.documents[0], authority="archived", date="2019-05-01"), *inp.documents[1:]]
    marked = render_report_html(Report(case_id="t", verdict="warn", input=msgspec.structs.replace(inp, documents=docs),
                                       findings=[], environment={"x": 1}))
    assert "authority · date" in marked and "archived · 2019-05-01" in marked
