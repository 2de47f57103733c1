"""diagnoses, findings, fingerprints, api keys, prompt library, nightly runs

Revision ID: 0001
Revises: 
Create Date: 2026-11-30 15:16:54.290837
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None

# JSONB on PostgreSQL (indexable), plain JSON elsewhere.
JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table('api_keys',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=128), nullable=False),
    sa.Column('key_hash', sa.String(length=64), nullable=False),
    sa.Column('rate_limit', sa.String(length=64), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('revoked_at', sa.DateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('key_hash'),
    sa.UniqueConstraint('name')
    )
    op.create_table('fingerprints',
    sa.Column('id', sa.String(length=64), nullable=False),
    sa.Column('data', JSON, nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_table('library_cases',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('case_id', sa.String(length=128), nullable=False),
    sa.Column('content_hash', sa.String(length=64), nullable=False),
    sa.Column('tags', JSON, nullable=False),
    sa.Column('case', JSON, nullable=False),
    sa.Column('current', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('case_id', 'content_hash')
    )
    with op.batch_alter_table('library_cases', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_library_cases_case_id'), ['case_id'], unique=False)

    op.create_table('nightly_runs',
    sa.Column('id', sa.String(length=32), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('tags', JSON, nullable=False),
    sa.Column('fail_on', sa.String(length=8), nullable=False),
    sa.Column('seed_offset', sa.Integer(), nullable=False),
    sa.Column('baseline_id', sa.String(length=32), nullable=True),
    sa.Column('summary', JSON, nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['baseline_id'], ['nightly_runs.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('nightly_runs', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_nightly_runs_created_at'), ['created_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_nightly_runs_status'), ['status'], unique=False)

    op.create_table('diagnoses',
    sa.Column('id', sa.String(length=32), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('mode', sa.String(length=8), nullable=False),
    sa.Column('case_id', sa.String(length=128), nullable=False),
    sa.Column('case', JSON, nullable=False),
    sa.Column('request_key', sa.String(length=64), nullable=False),
    sa.Column('seed_offset', sa.Integer(), nullable=False),
    sa.Column('report', JSON, nullable=True),
    sa.Column('verdict', sa.String(length=8), nullable=True),
    sa.Column('error', JSON, nullable=True),
    sa.Column('progress', JSON, nullable=True),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('cancel_requested', sa.Boolean(), nullable=False),
    sa.Column('api_key_id', sa.Integer(), nullable=True),
    sa.Column('fingerprint_id', sa.String(length=64), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['api_key_id'], ['api_keys.id'], ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['fingerprint_id'], ['fingerprints.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('diagnoses', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_diagnoses_case_id'), ['case_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_diagnoses_created_at'), ['created_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_diagnoses_request_key'), ['request_key'], unique=False)
        batch_op.create_index(batch_op.f('ix_diagnoses_status'), ['status'], unique=False)

    op.create_table('findings',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('diagnosis_id', sa.String(length=32), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('stage', sa.String(length=16), nullable=False),
    sa.Column('rule', sa.String(length=64), nullable=False),
    sa.Column('severity', sa.String(length=8), nullable=False),
    sa.Column('evidence', JSON, nullable=False),
    sa.Column('advice', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['diagnosis_id'], ['diagnoses.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('findings', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_findings_diagnosis_id'), ['diagnosis_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_findings_rule'), ['rule'], unique=False)

    op.create_table('nightly_items',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('run_id', sa.String(length=32), nullable=False),
    sa.Column('library_case_id', sa.Integer(), nullable=False),
    sa.Column('diagnosis_id', sa.String(length=32), nullable=False),
    sa.ForeignKeyConstraint(['diagnosis_id'], ['diagnoses.id'], ),
    sa.ForeignKeyConstraint(['library_case_id'], ['library_cases.id'], ),
    sa.ForeignKeyConstraint(['run_id'], ['nightly_runs.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('run_id', 'library_case_id')
    )
    with op.batch_alter_table('nightly_items', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_nightly_items_run_id'), ['run_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('nightly_items', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_nightly_items_run_id'))

    op.drop_table('nightly_items')
    with op.batch_alter_table('findings', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_findings_rule'))
        batch_op.drop_index(batch_op.f('ix_findings_diagnosis_id'))

    op.drop_table('findings')
    with op.batch_alter_table('diagnoses', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_diagnoses_status'))
        batch_op.drop_index(batch_op.f('ix_diagnoses_request_key'))
        batch_op.drop_index(batch_op.f('ix_diagnoses_created_at'))
        batch_op.drop_index(batch_op.f('ix_diagnoses_case_id'))

    op.drop_table('diagnoses')
    with op.batch_alter_table('nightly_runs', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_nightly_runs_status'))
        batch_op.drop_index(batch_op.f('ix_nightly_runs_created_at'))

    op.drop_table('nightly_runs')
    with op.batch_alter_table('library_cases', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_library_cases_case_id'))

    op.drop_table('library_cases')
    op.drop_table('fingerprints')
    op.drop_table('api_keys')
