"""superset: which platform dashboard each Superset dashboard (by UUID) is, its ids there,
and the code of a Superset chart's failure

Revision ID: 0033_superset
Revises: 0011_live_runs
Create Date: 2026-12-04
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0033_superset"
down_revision: str | Sequence[str] | None = "0011_live_runs"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "superset_dashboards",
        sa.Column("dashboard_id", sa.Integer(), nullable=False),
        sa.Column("uuid", sa.String(36), nullable=False),
        sa.Column("staging_id", sa.Integer(), nullable=True),
        sa.Column("production_id", sa.Integer(), nullable=True),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["dashboard_id"],
            ["dashboards.id"],
            name=op.f("fk_superset_dashboards_dashboard_id_dashboards"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("dashboard_id", name=op.f("pk_superset_dashboards")),
        sa.UniqueConstraint("uuid", name=op.f("uq_superset_dashboards_uuid")),
    )
    op.add_column("dashboard_chart_results", sa.Column("error_code", sa.String(64), nullable=True))


def downgrade() -> None:
    op.drop_column("dashboard_chart_results", "error_code")
    op.drop_table("superset_dashboards")
