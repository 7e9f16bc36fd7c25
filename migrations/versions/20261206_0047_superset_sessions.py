"""Superset as the person: each person's own Superset session per environment (sealed refresh
token, never a password)

Revision ID: 0047_superset_sessions
Revises: 0046_sso
Create Date: 2026-12-06
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0047_superset_sessions"
down_revision: str | Sequence[str] | None = "0046_sso"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "superset_sessions",
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("environment", sa.String(16), nullable=False),
        sa.Column("username", sa.String(255), nullable=False),
        sa.Column("provider", sa.String(8), nullable=False),
        sa.Column("refresh_sealed", sa.Text(), nullable=False),
        sa.Column("signed_in_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_superset_sessions_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("user_id", "environment", name=op.f("pk_superset_sessions")),
    )


def downgrade() -> None:
    op.drop_table("superset_sessions")
