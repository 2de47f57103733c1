"""Alembic migrations of the service database (run by ``diagnose db upgrade``)."""
