"""live runs: which run holds a conversation's lease and where it is served

Revision ID: 0011_live_runs
Revises: 0010_idempotency
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011_live_runs"
down_revision: str | Sequence[str] | None = "0010_idempotency"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("agent_runs", sa.Column("run_id", sa.String(64), nullable=True))
    op.add_column("agent_runs", sa.Column("owner_url", sa.String(512), nullable=True))


def downgrade() -> None:
    op.drop_column("agent_runs", "owner_url")
    op.drop_column("agent_runs", "run_id")
