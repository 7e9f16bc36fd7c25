"""feedback on answers and shared conversation snapshots

Revision ID: 0036_feedback_shares
Revises: 0011_live_runs
Create Date: 2026-12-04
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0036_feedback_shares"
down_revision: str | Sequence[str] | None = "0034_tokens"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "message_feedback",
        sa.Column("message_id", sa.BigInteger(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("rating", sa.String(4), nullable=False),
        sa.Column("comment", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("rating IN ('up', 'down')", name=op.f("ck_message_feedback_rating")),
        sa.ForeignKeyConstraint(
            ["message_id"],
            ["agent_messages.id"],
            name=op.f("fk_message_feedback_message_id_agent_messages"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_message_feedback_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("message_id", name=op.f("pk_message_feedback")),
    )
    op.create_index(
        "ix_message_feedback_rating_created", "message_feedback", ["rating", "created_at"]
    )
    op.create_table(
        "conversation_shares",
        sa.Column("share_id", sa.String(32), nullable=False),
        sa.Column("conversation_id", sa.Uuid(), nullable=False),
        sa.Column("title", sa.String(200), nullable=False),
        sa.Column("messages", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("shared_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["agent_conversations.id"],
            name=op.f("fk_conversation_shares_conversation_id_agent_conversations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("share_id", name=op.f("pk_conversation_shares")),
        sa.UniqueConstraint("conversation_id", name=op.f("uq_conversation_shares_conversation_id")),
    )


def downgrade() -> None:
    op.drop_table("conversation_shares")
    op.drop_index("ix_message_feedback_rating_created", table_name="message_feedback")
    op.drop_table("message_feedback")
