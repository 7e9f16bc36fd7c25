"""operational logs and knowledge base (object storage needs no table)

Revision ID: 0004_ops
Revises: 0001_core
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0004_ops"
down_revision: str | Sequence[str] | None = "0003_dashboards"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "knowledge_articles",
        sa.Column("id", sa.Integer(), sa.Identity(always=False), nullable=False),
        sa.Column("slug", sa.String(length=120), nullable=False),
        sa.Column("lang", sa.String(length=2), nullable=False),
        sa.Column("title", sa.String(length=200), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("tags", postgresql.ARRAY(sa.String(length=40)), nullable=False),
        sa.Column(
            "search",
            postgresql.TSVECTOR(),
            sa.Computed(
                "setweight(to_tsvector(CASE WHEN ((lang)::text = 'ru'::text) THEN 'russian'::regconfig ELSE 'english'::regconfig END, (title)::text), 'A'::\"char\") || setweight(to_tsvector(CASE WHEN ((lang)::text = 'ru'::text) THEN 'russian'::regconfig ELSE 'english'::regconfig END, body), 'B'::\"char\")",
                persisted=True,
            ),
            nullable=False,
        ),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("lang IN ('ru', 'en')", name=op.f("ck_knowledge_articles_lang")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_knowledge_articles")),
        sa.UniqueConstraint("slug", name=op.f("uq_knowledge_articles_slug")),
    )
    op.create_index(
        "ix_knowledge_articles_search",
        "knowledge_articles",
        ["search"],
        unique=False,
        postgresql_using="gin",
    )
    op.create_table(
        "operational_logs",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("level", sa.String(length=16), nullable=False),
        sa.Column("source", sa.String(length=32), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("dashboard_id", sa.Integer(), nullable=True),
        sa.Column("details", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column(
            "search",
            postgresql.TSVECTOR(),
            sa.Computed(
                "to_tsvector('simple'::regconfig, (((source)::text || ' '::text) || message)) || to_tsvector('english'::regconfig, message) || jsonb_to_tsvector('simple'::regconfig, details, '[\"string\"]'::jsonb)",
                persisted=True,
            ),
            nullable=False,
        ),
        sa.CheckConstraint(
            "level IN ('debug', 'info', 'warning', 'error')", name=op.f("ck_operational_logs_level")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_operational_logs")),
    )
    op.create_index(
        "ix_operational_logs_created_at", "operational_logs", ["created_at"], unique=False
    )
    op.create_index(
        "ix_operational_logs_dashboard_created",
        "operational_logs",
        ["dashboard_id", "created_at"],
        unique=False,
    )
    op.create_index(
        "ix_operational_logs_search",
        "operational_logs",
        ["search"],
        unique=False,
        postgresql_using="gin",
    )


def downgrade() -> None:
    op.drop_index(
        "ix_operational_logs_search", table_name="operational_logs", postgresql_using="gin"
    )
    op.drop_index("ix_operational_logs_dashboard_created", table_name="operational_logs")
    op.drop_index("ix_operational_logs_created_at", table_name="operational_logs")
    op.drop_table("operational_logs")
    op.drop_index(
        "ix_knowledge_articles_search", table_name="knowledge_articles", postgresql_using="gin"
    )
    op.drop_table("knowledge_articles")
