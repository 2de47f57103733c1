"""`diagnose keys`, `db` and `worker`: exit codes and messages (no server is started)."""

from __future__ import annotations

import pytest

from diagnose.cli import _run, cli


def invoke(args: list[str]) -> int:
    return _run(lambda: cli.main(args=args, prog_name="diagnose", standalone_mode=False), False)


@pytest.fixture
def database(tmp_path, monkeypatch) -> str:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    monkeypatch.setenv("DATABASE_URL", url)
    return url


def test_keys_add_prints_the_key_once_and_list_never_shows_it(database, capsys):
    assert invoke(["keys", "add", "ci", "--rate-limit", "10/minute"]) == 0
    key = capsys.readouterr().out.strip()
    assert key.startswith("rdk_") and len(key) > 40
    assert invoke(["keys", "list"]) == 0
    listed = capsys.readouterr().out
    assert "ci\tactive\t10/minute" in listed and key not in listed
    assert listed.splitlines()[0].endswith("\tuser")  # the default role, last on the line


def test_keys_add_takes_a_role(database, capsys):
    assert invoke(["keys", "add", "root", "--role", "admin"]) == 0
    assert invoke(["keys", "add", "alice", "--role", "user"]) == 0
    assert invoke(["keys", "add", "mallory", "--role", "owner"]) == 2
    capsys.readouterr()
    assert invoke(["keys", "list"]) == 0
    roles = {line.split("\t")[0]: line.split("\t")[-1] for line in capsys.readouterr().out.splitlines()}
    assert roles == {"root": "admin", "alice": "user"}


def test_keys_errors_are_usage_errors(database, capsys):
    assert invoke(["keys", "add", "ci"]) == 0
    assert invoke(["keys", "add", "ci"]) == 2
    assert "usage: an API key named 'ci' exists" in capsys.readouterr().err
    assert invoke(["keys", "add", "other", "--rate-limit", "lots"]) == 2
    assert "--rate-limit" in capsys.readouterr().err
    assert invoke(["keys", "revoke", "nobody"]) == 2
    assert invoke(["keys", "revoke", "ci"]) == 0
    assert invoke(["keys", "list"]) == 0
    assert "ci\trevoked" in capsys.readouterr().out


def test_db_upgrade_and_downgrade(database, capsys):
    from sqlalchemy import create_engine, inspect

    assert invoke(["db", "upgrade"]) == 0
    assert "diagnoses" in inspect(create_engine(database)).get_table_names()
    assert invoke(["db", "downgrade", "base"]) == 0
    assert "diagnoses" not in inspect(create_engine(database)).get_table_names()


def test_worker_needs_postgresql(database, capsys):
    assert invoke(["worker"]) == 2
    assert "DATABASE_URL=postgresql" in capsys.readouterr().err
