"""Suite-wide collection: tests that need PostgreSQL get the ``postgres`` marker; the reader
defaults to static (``RAG_DIAGNOSE_READER``) unless a test chooses one.

A test needs PostgreSQL when it uses the ``postgres_url`` fixture (directly or
through another fixture), or when it is the ``postgresql`` instance of the
``database_url`` fixture (which asks for ``postgres_url`` only at run time, so
it is not in the test's fixture closure). ``make test-fast`` deselects them with
``-m "not postgres"``; ``make test`` runs them.
"""

from __future__ import annotations

import os

import pytest

# Pipeline tests (and the service's workers they start) read with the static tier unless a test
# asks for a reader: the reference reader costs seconds a document, and its own behaviour is
# tested where it is asked for (tests/reader, marked ``reader``), including the default choice.
os.environ.setdefault("RAG_DIAGNOSE_READER", "static")

#: Fixtures whose use means the test talks to PostgreSQL.
POSTGRES_FIXTURES = frozenset({"postgres_url"})
#: Parametrised fixtures whose PostgreSQL instance does.
POSTGRES_PARAMS = {"database_url": "postgresql"}


def needs_postgres(item: pytest.Item) -> bool:
    if POSTGRES_FIXTURES.intersection(getattr(item, "fixturenames", ())):
        return True
    callspec = getattr(item, "callspec", None)
    params = callspec.params if callspec is not None else {}
    return any(params.get(name) == value for name, value in POSTGRES_PARAMS.items())


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if needs_postgres(item) and item.get_closest_marker("postgres") is None:
            item.add_marker(pytest.mark.postgres)
