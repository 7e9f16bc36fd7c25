"""idempotency keys: a history row written again after a lost answer is stored once

Revision ID: 0010_idempotency
Revises: 0009_usage
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010_idempotency"
down_revision: str | Sequence[str] | None = "0009_usage"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("agent_messages", sa.Column("idempotency_key", sa.String(64), nullable=True))
    op.create_unique_constraint(
        "uq_agent_messages_idempotency_key",
        "agent_messages",
        ["conversation_id", "idempotency_key"],
    )


def downgrade() -> None:
    op.drop_constraint("uq_agent_messages_idempotency_key", "agent_messages", type_="unique")
    op.drop_column("agent_messages", "idempotency_key")
