"""nightly: room for "sha256:"-prefixed content hashes, index on nightly_items.diagnosis_id

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30 15:27:23.866040
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # diagnose.nightly.library.content_hash gives "sha256:<64 hex>" (71 characters).
    with op.batch_alter_table('library_cases', schema=None) as batch_op:
        batch_op.alter_column('content_hash', existing_type=sa.String(length=64), type_=sa.String(length=80),
                              existing_nullable=False)
    op.execute("UPDATE library_cases SET content_hash = 'sha256:' || content_hash "
               "WHERE content_hash NOT LIKE 'sha256:%'")  # rows a downgrade stripped

    # Each finished diagnosis looks up the nightly run it belongs to.
    with op.batch_alter_table('nightly_items', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_nightly_items_diagnosis_id'), ['diagnosis_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('nightly_items', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_nightly_items_diagnosis_id'))

    # The bare hex digest fits the old width.
    op.execute("UPDATE library_cases SET content_hash = substr(content_hash, 8) WHERE content_hash LIKE 'sha256:%'")
    with op.batch_alter_table('library_cases', schema=None) as batch_op:
        batch_op.alter_column('content_hash', existing_type=sa.String(length=80), type_=sa.String(length=64),
                              existing_nullable=False)
