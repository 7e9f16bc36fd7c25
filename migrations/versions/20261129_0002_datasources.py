"""datasources: applied datasource migrations

Revision ID: 0002_datasources
Revises: 0001_core
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002_datasources"
down_revision: str | Sequence[str] | None = "0001_core"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "datasource_migrations",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("datasource", sa.String(length=64), nullable=False),
        sa.Column("migration_id", sa.String(length=128), nullable=False),
        sa.Column("checksum", sa.String(length=64), nullable=False),
        sa.Column("applied_by", sa.String(length=64), nullable=False),
        sa.Column("applied_by_user_id", sa.Uuid(), nullable=True),
        sa.Column("applied_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_datasource_migrations")),
        sa.UniqueConstraint(
            "datasource", "migration_id", name=op.f("uq_datasource_migrations_datasource")
        ),
    )


def downgrade() -> None:
    op.drop_table("datasource_migrations")
