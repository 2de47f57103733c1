"""diagnoses: the admitted cost (generated tokens at most), for fair shares and the measured rate

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01 23:45:00

Diagnoses stored before count 0: they were admitted by number only.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('diagnoses', schema=None) as batch_op:
        batch_op.add_column(sa.Column('cost', sa.Integer(), server_default='0', nullable=False))


def downgrade() -> None:
    with op.batch_alter_table('diagnoses', schema=None) as batch_op:
        batch_op.drop_column('cost')
