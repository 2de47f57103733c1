"""constraint names: every primary key, unique and foreign key constraint named by the convention

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02 03:00:00

The tables of 0001 and 0005 were made before the models had a naming convention
(``api.db.models.NAMING_CONVENTION``): PostgreSQL named their constraints its own way
(``diagnoses_pkey``, ``diagnoses_api_key_id_fkey``) and SQLite left them unnamed. Both
now carry the convention's names. PostgreSQL renames in place; SQLite cannot rename a
constraint, so each table is copied with the names (Alembic's batch mode). Downgrade gives
PostgreSQL its own names back; on SQLite it leaves the names (an unnamed constraint and a
named one behave the same there).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from api.db.models import NAMING_CONVENTION

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None

TABLES = ('api_keys', 'fingerprints', 'diagnoses', 'findings', 'library_cases', 'nightly_runs', 'nightly_items',
          'sessions')


NAMED_BEFORE = {'fk_library_cases_api_key_id_api_keys', 'fk_nightly_runs_api_key_id_api_keys'}
"""Named by 0003 itself: downgrading keeps them."""


def _conventional(table: str, kind: str, columns: list[str], referred: str | None = None) -> str:
    if kind == 'pk':
        return f'pk_{table}'
    if kind == 'uq':
        return f'uq_{table}_{"_".join(columns)}'
    return f'fk_{table}_{columns[0]}_{referred}'


def _postgres_default(table: str, kind: str, columns: list[str]) -> str:
    """What PostgreSQL calls an unnamed constraint (its ``ChooseConstraintName``; names stay short here)."""
    suffix = {'pk': 'pkey', 'uq': 'key', 'fk': 'fkey'}[kind]
    return f'{table}_pkey' if kind == 'pk' else f'{table}_{"_".join(columns)}_{suffix}'


def _constraints(table: str) -> list[tuple[str, str | None, list[str], str | None]]:
    """(kind, current name, columns, referred table) of each constraint of ``table``."""
    inspector = sa.inspect(op.get_bind())
    pk = inspector.get_pk_constraint(table)
    found = [('pk', pk.get('name'), pk['constrained_columns'], None)]
    found += [('uq', uq.get('name'), uq['column_names'], None) for uq in inspector.get_unique_constraints(table)]
    found += [('fk', fk.get('name'), fk['constrained_columns'], fk['referred_table'])
              for fk in inspector.get_foreign_keys(table)]
    return found


def _rename_on_postgres(to_convention: bool) -> None:
    for table in TABLES:
        for kind, name, columns, referred in _constraints(table):
            default, conventional = _postgres_default(table, kind, columns), _conventional(table, kind, columns, referred)
            old, new = (default, conventional) if to_convention else (conventional, default)
            if name == old and name not in NAMED_BEFORE:
                op.execute(f'ALTER TABLE {table} RENAME CONSTRAINT "{old}" TO "{new}"')


def upgrade() -> None:
    if op.get_bind().dialect.name == 'postgresql':
        _rename_on_postgres(to_convention=True)
        return
    for table in TABLES:
        # Reflected with the convention, the unnamed constraints take its names in the copy.
        with op.batch_alter_table(table, recreate='always', naming_convention=NAMING_CONVENTION):
            pass


def downgrade() -> None:
    if op.get_bind().dialect.name == 'postgresql':
        _rename_on_postgres(to_convention=False)
