"""The stored prompt library: versions by content hash, validation, the push command (SQLite and PostgreSQL)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from litestar.testing import TestClient
from sqlalchemy import select

from api.app import create_app
from api.db.models import LibraryCase
from diagnose.case import case_from_dict
from diagnose.nightly.library import content_hash, discover
from tests.api.conftest import FakeInline, ListQueue, service_settings, small_case
from tests.api.test_diagnoses_api import assert_problem

LIBRARY = Path(__file__).resolve().parents[2] / "fixtures" / "library"


@pytest.fixture
def client(database_url):
    app = create_app(service_settings(database_url), queue=ListQueue(), inline=FakeInline())
    with TestClient(app) as client:
        client.app_state = app.state
        yield client


def tagged(case_id: str, *tags: str, **changes) -> dict:
    case = small_case(case_id, **changes)
    case["tags"] = list(tags)
    return case


def rows(client, case_id: str) -> list[tuple[str, bool, list]]:
    with client.app_state.service.db.session() as session:
        found = session.scalars(select(LibraryCase).where(LibraryCase.case_id == case_id).order_by(LibraryCase.id))
        return [(r.content_hash, r.current, list(r.tags)) for r in found]


def test_push_versions_by_content_hash(client):
    v1 = tagged("bridge", "smoke")
    first = client.post("/v1/library", json={"cases": [v1, tagged("other")]})
    assert first.status_code == 200, first.text
    assert first.json()["counts"] == {"added": 2}
    hash1 = content_hash(case_from_dict(v1))
    assert first.json()["cases"][0] == {"case_id": "bridge", "content_hash": hash1, "tags": ["smoke"],
                                         "version": 1, "status": "added"}
    again = client.post("/v1/library", json={"cases": [v1]}).json()
    assert again["counts"] == {"unchanged": 1} and rows(client, "bridge") == [(hash1, True, ["smoke"])]

    retag = client.post("/v1/library", json={"cases": [tagged("bridge", "smoke", "nightly")]}).json()
    assert retag["cases"][0]["status"] == "retagged" and retag["cases"][0]["version"] == 1
    assert rows(client, "bridge") == [(hash1, True, ["nightly", "smoke"])]

    v2 = tagged("bridge", "smoke", documents=3)
    updated = client.post("/v1/library", json={"cases": [v2]}).json()["cases"][0]
    hash2 = content_hash(case_from_dict(v2))
    assert updated == {"case_id": "bridge", "content_hash": hash2, "tags": ["smoke"], "version": 2,
                       "status": "updated"}
    assert rows(client, "bridge") == [(hash1, False, ["nightly", "smoke"]), (hash2, True, ["smoke"])]

    listed = {c["case_id"]: c for c in client.get("/v1/library").json()}
    assert set(listed) == {"bridge", "other"}
    assert listed["bridge"]["content_hash"] == hash2 and listed["bridge"]["versions"] == 2
    assert listed["bridge"]["latest"] is None

    restored = client.post("/v1/library", json={"cases": [v1]}).json()["cases"][0]
    assert restored["status"] == "restored" and restored["version"] == 1
    assert [current for _, current, _ in rows(client, "bridge")] == [True, False]


def test_list_filters_by_every_tag(client):
    client.post("/v1/library", json={"cases": [tagged("a", "smoke", "clean"), tagged("b", "smoke"), tagged("c")]})
    assert [c["case_id"] for c in client.get("/v1/library?tag=smoke").json()] == ["a", "b"]
    assert [c["case_id"] for c in client.get("/v1/library?tag=smoke&tag=clean").json()] == ["a"]
    assert client.get("/v1/library?tag=absent").json() == []


@pytest.mark.parametrize(("cases", "status", "field"), [
    ([small_case("ok"), {**small_case("bad"), "sampling": {"top_p": 1.5}}], 422, "cases[1].sampling.top_p"),
    ([small_case("ok"), {"question": "no id"}], 422, "cases[1].id"),
    ([small_case("ok"), "not a case"], 422, "cases[1]"),
    ([small_case("same"), small_case("same")], 422, "cases[1].id"),
    ([small_case("big", documents=21)], 413, "cases[0].documents"),
    ([small_case("ok"), {**small_case("amp"), "template": "{question}" + "{documents}" * 5000}], 413,
     "cases[1].template"),
    ([small_case("ok"), {**small_case("long"), "question": "why " * 17_000}], 413, "cases[1].question"),
    ([], 422, "cases"),
])
def test_invalid_push_names_the_field_and_stores_nothing(client, cases, status, field):
    assert_problem(client.post("/v1/library", json={"cases": cases}), status, field)
    assert client.get("/v1/library").json() == []


def test_body_without_cases_is_a_problem(client):
    assert_problem(client.post("/v1/library", json={"case": []}), 422, "cases")


def statuses(stdout: str) -> dict[str, int]:
    """``status case_id (version n)`` lines of ``diagnose library push``, counted by status."""
    return dict(Counter(line.split()[0] for line in stdout.splitlines() if line.strip()))


def test_library_push_command(database_url, monkeypatch):
    from diagnose.cli import cli

    monkeypatch.setenv("DATABASE_URL", database_url)
    runner = CliRunner()
    first = runner.invoke(cli, ["library", "push", str(LIBRARY), "--tag", "clean"], catch_exceptions=False)
    clean = discover(LIBRARY, ["clean"])
    assert first.exit_code == 0, first.output
    assert statuses(first.stdout) == {"added": len(clean)} and len(clean) >= 5
    everything = runner.invoke(cli, ["library", "push", str(LIBRARY)], catch_exceptions=False)
    assert statuses(everything.stdout) == {"unchanged": len(clean), "added": len(discover(LIBRARY)) - len(clean)}
    assert f"{len(discover(LIBRARY))} cases pushed" in everything.stderr

    from api.db.session import Database
    from api.services.library import LibraryService

    listed = LibraryService(Database(database_url)).list()
    assert {c.case_id: c.content_hash for c in listed} == {c.case_id: c.content_hash for c in discover(LIBRARY)}


def test_migration_0002_round_trip_keeps_the_hashes(client, database_url):
    from api.db.migrate import downgrade, upgrade

    client.post("/v1/library", json={"cases": [small_case("bridge")]})
    stored = rows(client, "bridge")[0][0]
    assert stored.startswith("sha256:") and len(stored) == 71
    client.app_state.service.db.dispose()
    downgrade(database_url, "0001")
    with client.app_state.service.db.session() as session:
        assert session.scalar(select(LibraryCase.content_hash)) == stored.removeprefix("sha256:")
    client.app_state.service.db.dispose()
    upgrade(database_url)
    assert rows(client, "bridge")[0][0] == stored
    assert client.post("/v1/library", json={"cases": [small_case("bridge")]}).json()["counts"] == {"unchanged": 1}


def test_library_push_of_an_invalid_case_exits_2_naming_file_and_field(database_url, monkeypatch, tmp_path, capsys):
    from diagnose.cli import main

    monkeypatch.setenv("DATABASE_URL", database_url)
    (tmp_path / "good.yaml").write_text("id: good\nquestion: Why?\ndocuments: []\n")
    (tmp_path / "bad.yaml").write_text("id: bad\nquestion: Why?\nsampling: {top_p: 1.5}\n")
    with pytest.raises(SystemExit) as exited:
        main(["library", "push", str(tmp_path)])
    assert exited.value.code == 2
    assert "bad.yaml: sampling.top_p" in capsys.readouterr().err
