"""usage: one row per model call, rollups per user/day/model and per conversation, budgets

Revision ID: 0009_usage
Revises: 0008_debug_records
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009_usage"
down_revision: str | Sequence[str] | None = "0008_debug_records"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _user_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["user_id"], ["users.id"], name=op.f(f"fk_{table}_user_id_users"), ondelete="CASCADE"
    )


def upgrade() -> None:
    op.create_table(
        "usage_calls",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("idempotency_key", sa.String(200), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("conversation_id", sa.Uuid(), nullable=True),
        sa.Column("run_id", sa.String(64), nullable=True),
        sa.Column("mode", sa.String(16), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("input_tokens", sa.Integer(), nullable=False),
        sa.Column("output_tokens", sa.Integer(), nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("evaluation", sa.Boolean(), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "source IN ('reported', 'estimated')", name=op.f("ck_usage_calls_source")
        ),
        sa.CheckConstraint(
            "input_tokens >= 0 AND output_tokens >= 0", name=op.f("ck_usage_calls_tokens")
        ),
        _user_fk("usage_calls"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_usage_calls")),
        sa.UniqueConstraint("idempotency_key", name=op.f("uq_usage_calls_idempotency_key")),
    )
    op.create_table(
        "usage_daily",
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("input_tokens", sa.BigInteger(), nullable=False),
        sa.Column("output_tokens", sa.BigInteger(), nullable=False),
        sa.Column("model_calls", sa.BigInteger(), nullable=False),
        sa.Column("estimated_calls", sa.BigInteger(), nullable=False),
        _user_fk("usage_daily"),
        sa.PrimaryKeyConstraint("user_id", "day", "model", name=op.f("pk_usage_daily")),
    )
    op.create_index("ix_usage_daily_day", "usage_daily", ["day"])
    op.create_table(
        "usage_conversations",
        sa.Column("conversation_id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("input_tokens", sa.BigInteger(), nullable=False),
        sa.Column("output_tokens", sa.BigInteger(), nullable=False),
        sa.Column("model_calls", sa.BigInteger(), nullable=False),
        _user_fk("usage_conversations"),
        sa.PrimaryKeyConstraint("conversation_id", name=op.f("pk_usage_conversations")),
    )
    op.create_index("ix_usage_conversations_user_id", "usage_conversations", ["user_id"])
    op.create_table(
        "usage_budgets",
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("daily_tokens", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("daily_tokens >= 0", name=op.f("ck_usage_budgets_daily_tokens")),
        _user_fk("usage_budgets"),
        sa.PrimaryKeyConstraint("user_id", name=op.f("pk_usage_budgets")),
    )


def downgrade() -> None:
    op.drop_table("usage_budgets")
    op.drop_index("ix_usage_conversations_user_id", table_name="usage_conversations")
    op.drop_table("usage_conversations")
    op.drop_index("ix_usage_daily_day", table_name="usage_daily")
    op.drop_table("usage_daily")
    op.drop_table("usage_calls")
