"""The service fixtures (SQLite and PostgreSQL databases) shared with ``tests/api``."""

from tests.api.conftest import database_url, postgres_url, sqlite_url  # noqa: F401  (fixtures)
