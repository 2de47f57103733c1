"""diagnoses: the worker lease (owner token and expiry) that fences a running diagnosis

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-03 10:00:00

A running diagnosis belongs to the worker whose token is in ``lease_owner`` until
``lease_expires_at``; the worker renews it while it runs. Diagnoses running when this is
applied have no lease: the next delivery may claim them, as before.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('diagnoses', schema=None) as batch_op:
        batch_op.add_column(sa.Column('lease_owner', sa.String(length=32), nullable=True))
        batch_op.add_column(sa.Column('lease_expires_at', sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('diagnoses', schema=None) as batch_op:
        batch_op.drop_column('lease_expires_at')
        batch_op.drop_column('lease_owner')
