"""dashboards: versions, branches, validation runs, deployments, environments

Revision ID: 0003_dashboards
Revises: 0001_core
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0003_dashboards"
down_revision: str | Sequence[str] | None = "0002_datasources"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "dashboards",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("title", sa.String(length=200), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("tags", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("owner", sa.String(length=64), nullable=False),
        sa.Column("main_version_id", sa.Integer(), nullable=True),
        sa.Column(
            "search",
            postgresql.TSVECTOR(),
            sa.Computed(
                "setweight(to_tsvector('simple'::regconfig, coalesce(title, '')), 'A') || setweight(jsonb_to_tsvector('simple'::regconfig, tags, '[\"string\"]'::jsonb), 'B') || setweight(to_tsvector('simple'::regconfig, coalesce(description, '')), 'C')",
                persisted=True,
            ),
            nullable=False,
        ),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_dashboards")),
    )
    op.create_index(
        "ix_dashboards_search", "dashboards", ["search"], unique=False, postgresql_using="gin"
    )
    op.create_table(
        "dashboard_versions",
        sa.Column("id", sa.Integer(), sa.Identity(always=False), nullable=False),
        sa.Column("dashboard_id", sa.Integer(), nullable=False),
        sa.Column("parent_version_id", sa.Integer(), nullable=True),
        sa.Column("definition", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("author", sa.String(length=64), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["dashboard_id"],
            ["dashboards.id"],
            name=op.f("fk_dashboard_versions_dashboard_id_dashboards"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["parent_version_id"],
            ["dashboard_versions.id"],
            name=op.f("fk_dashboard_versions_parent_version_id_dashboard_versions"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_dashboard_versions")),
    )
    op.create_index(
        "ix_dashboard_versions_dashboard_id", "dashboard_versions", ["dashboard_id"], unique=False
    )
    # dashboards <-> dashboard_versions reference each other: this key is added once both exist.
    op.create_foreign_key(
        op.f("fk_dashboards_main_version_id_dashboard_versions"),
        "dashboards",
        "dashboard_versions",
        ["main_version_id"],
        ["id"],
    )
    op.create_table(
        "dashboard_branches",
        sa.Column("id", sa.Integer(), sa.Identity(always=False), nullable=False),
        sa.Column("dashboard_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("base_version_id", sa.Integer(), nullable=False),
        sa.Column("head_version_id", sa.Integer(), nullable=False),
        sa.Column("created_by", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["base_version_id"],
            ["dashboard_versions.id"],
            name=op.f("fk_dashboard_branches_base_version_id_dashboard_versions"),
        ),
        sa.ForeignKeyConstraint(
            ["dashboard_id"],
            ["dashboards.id"],
            name=op.f("fk_dashboard_branches_dashboard_id_dashboards"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["head_version_id"],
            ["dashboard_versions.id"],
            name=op.f("fk_dashboard_branches_head_version_id_dashboard_versions"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_dashboard_branches")),
        sa.UniqueConstraint(
            "dashboard_id", "name", name=op.f("uq_dashboard_branches_dashboard_id")
        ),
    )
    op.create_table(
        "dashboard_validation_runs",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("dashboard_id", sa.Integer(), nullable=False),
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("ref", sa.String(length=128), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("elapsed_ms", sa.Double(), nullable=False),
        sa.Column("triggered_by", sa.String(length=64), nullable=False),
        sa.CheckConstraint(
            "status IN ('ok', 'warning', 'failing')",
            name=op.f("ck_dashboard_validation_runs_status"),
        ),
        sa.ForeignKeyConstraint(
            ["dashboard_id"],
            ["dashboards.id"],
            name=op.f("fk_dashboard_validation_runs_dashboard_id_dashboards"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["dashboard_versions.id"],
            name=op.f("fk_dashboard_validation_runs_version_id_dashboard_versions"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_dashboard_validation_runs")),
    )
    op.create_index(
        "ix_dashboard_validation_runs_dashboard",
        "dashboard_validation_runs",
        ["dashboard_id", sa.literal_column("started_at DESC")],
        unique=False,
    )
    op.create_index(
        "ix_dashboard_validation_runs_version",
        "dashboard_validation_runs",
        ["version_id", sa.literal_column("started_at DESC")],
        unique=False,
    )
    op.create_table(
        "dashboard_chart_results",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("run_id", sa.BigInteger(), nullable=False),
        sa.Column("chart_key", sa.String(length=64), nullable=False),
        sa.Column("chart_title", sa.String(length=200), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("elapsed_ms", sa.Double(), nullable=False),
        sa.Column("row_count", sa.Integer(), nullable=True),
        sa.CheckConstraint(
            "status IN ('ok', 'warning', 'failing')", name=op.f("ck_dashboard_chart_results_status")
        ),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["dashboard_validation_runs.id"],
            name=op.f("fk_dashboard_chart_results_run_id_dashboard_validation_runs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_dashboard_chart_results")),
    )
    op.create_index(
        "ix_dashboard_chart_results_run_id", "dashboard_chart_results", ["run_id"], unique=False
    )
    op.create_table(
        "dashboard_deployments",
        sa.Column("id", sa.Integer(), sa.Identity(always=False), nullable=False),
        sa.Column("dashboard_id", sa.Integer(), nullable=False),
        sa.Column("environment", sa.String(length=16), nullable=False),
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("ref", sa.String(length=128), nullable=False),
        sa.Column("forced", sa.Boolean(), nullable=False),
        sa.Column("deployed_by", sa.String(length=64), nullable=False),
        sa.Column("deployed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("validation_run_id", sa.BigInteger(), nullable=True),
        sa.CheckConstraint(
            "environment IN ('staging', 'production')",
            name=op.f("ck_dashboard_deployments_environment"),
        ),
        sa.ForeignKeyConstraint(
            ["dashboard_id"],
            ["dashboards.id"],
            name=op.f("fk_dashboard_deployments_dashboard_id_dashboards"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["validation_run_id"],
            ["dashboard_validation_runs.id"],
            name=op.f("fk_dashboard_deployments_validation_run_id_dashboard_validation_runs"),
        ),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["dashboard_versions.id"],
            name=op.f("fk_dashboard_deployments_version_id_dashboard_versions"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_dashboard_deployments")),
    )
    op.create_index(
        "ix_dashboard_deployments_dashboard",
        "dashboard_deployments",
        ["dashboard_id", sa.literal_column("deployed_at DESC")],
        unique=False,
    )
    op.create_table(
        "dashboard_environments",
        sa.Column("dashboard_id", sa.Integer(), nullable=False),
        sa.Column("environment", sa.String(length=16), nullable=False),
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("deployment_id", sa.Integer(), nullable=False),
        sa.CheckConstraint(
            "environment IN ('staging', 'production')",
            name=op.f("ck_dashboard_environments_environment"),
        ),
        sa.ForeignKeyConstraint(
            ["dashboard_id"],
            ["dashboards.id"],
            name=op.f("fk_dashboard_environments_dashboard_id_dashboards"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["deployment_id"],
            ["dashboard_deployments.id"],
            name=op.f("fk_dashboard_environments_deployment_id_dashboard_deployments"),
        ),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["dashboard_versions.id"],
            name=op.f("fk_dashboard_environments_version_id_dashboard_versions"),
        ),
        sa.PrimaryKeyConstraint(
            "dashboard_id", "environment", name=op.f("pk_dashboard_environments")
        ),
    )


def downgrade() -> None:
    op.drop_table("dashboard_environments")
    op.drop_index("ix_dashboard_deployments_dashboard", table_name="dashboard_deployments")
    op.drop_table("dashboard_deployments")
    op.drop_index("ix_dashboard_chart_results_run_id", table_name="dashboard_chart_results")
    op.drop_table("dashboard_chart_results")
    op.drop_index("ix_dashboard_validation_runs_version", table_name="dashboard_validation_runs")
    op.drop_index("ix_dashboard_validation_runs_dashboard", table_name="dashboard_validation_runs")
    op.drop_table("dashboard_validation_runs")
    op.drop_table("dashboard_branches")
    op.drop_constraint(
        op.f("fk_dashboards_main_version_id_dashboard_versions"), "dashboards", type_="foreignkey"
    )
    op.drop_index("ix_dashboard_versions_dashboard_id", table_name="dashboard_versions")
    op.drop_table("dashboard_versions")
    op.drop_index("ix_dashboards_search", table_name="dashboards", postgresql_using="gin")
    op.drop_table("dashboards")
