"""owners: a role per API key; library cases and nightly runs belong to a key

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01 23:30:00

Keys made before roles existed become ``user`` keys: they keep their own work and no
longer see anyone else's (``diagnose keys add NAME --role admin`` for one that should).
A library case's id is unique per owner: two keys may each keep a case ``faq-1``.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None

_OLD_UNIQUE_POSTGRES = 'library_cases_case_id_content_hash_key'
_NEW_UNIQUE = 'uq_library_cases_owner_case_hash'
_NAMES = {"uq": "uq_%(table_name)s_%(column_0_N_name)s"}
"""SQLite keeps the 0001 unique constraint unnamed: the batch copy names it by this convention."""


def _old_unique() -> str:
    return _OLD_UNIQUE_POSTGRES if op.get_bind().dialect.name == 'postgresql' else 'uq_library_cases_case_id_content_hash'


def upgrade() -> None:
    with op.batch_alter_table('api_keys', schema=None) as batch_op:
        batch_op.add_column(sa.Column('role', sa.String(length=8), server_default='user', nullable=False))

    with op.batch_alter_table('library_cases', schema=None, naming_convention=_NAMES) as batch_op:
        batch_op.add_column(sa.Column('api_key_id', sa.Integer(), nullable=True))
        batch_op.create_foreign_key(batch_op.f('fk_library_cases_api_key_id_api_keys'), 'api_keys',
                                    ['api_key_id'], ['id'], ondelete='SET NULL')
        batch_op.create_index(batch_op.f('ix_library_cases_api_key_id'), ['api_key_id'], unique=False)
        batch_op.drop_constraint(_old_unique(), type_='unique')
        batch_op.create_unique_constraint(_NEW_UNIQUE, ['api_key_id', 'case_id', 'content_hash'])

    with op.batch_alter_table('nightly_runs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('api_key_id', sa.Integer(), nullable=True))
        batch_op.create_foreign_key(batch_op.f('fk_nightly_runs_api_key_id_api_keys'), 'api_keys',
                                    ['api_key_id'], ['id'], ondelete='SET NULL')
        batch_op.create_index(batch_op.f('ix_nightly_runs_api_key_id'), ['api_key_id'], unique=False)

    with op.batch_alter_table('diagnoses', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_diagnoses_api_key_id'), ['api_key_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('diagnoses', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_diagnoses_api_key_id'))

    with op.batch_alter_table('nightly_runs', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_nightly_runs_api_key_id'))
        batch_op.drop_constraint(batch_op.f('fk_nightly_runs_api_key_id_api_keys'), type_='foreignkey')
        batch_op.drop_column('api_key_id')

    # Two owners' copies of one case would break the old uniqueness: only the unowned ones stay.
    op.execute("DELETE FROM nightly_items WHERE library_case_id IN "
               "(SELECT id FROM library_cases WHERE api_key_id IS NOT NULL)")
    op.execute("DELETE FROM library_cases WHERE api_key_id IS NOT NULL")
    with op.batch_alter_table('library_cases', schema=None) as batch_op:
        batch_op.drop_constraint(_NEW_UNIQUE, type_='unique')
        batch_op.create_unique_constraint(_old_unique(), ['case_id', 'content_hash'])
        batch_op.drop_index(batch_op.f('ix_library_cases_api_key_id'))
        batch_op.drop_constraint(batch_op.f('fk_library_cases_api_key_id_api_keys'), type_='foreignkey')
        batch_op.drop_column('api_key_id')

    with op.batch_alter_table('api_keys', schema=None) as batch_op:
        batch_op.drop_column('role')
