"""schedules, their runs and deliveries; procrastinate's queue schema

Revision ID: 0048_schedules
Revises: 0047_superset_sessions
Create Date: 2026-12-06
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from procrastinate.schema import SchemaManager
from sqlalchemy.dialects import postgresql

revision: str = "0048_schedules"
down_revision: str | Sequence[str] | None = "0047_superset_sessions"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TS = sa.DateTime(timezone=True)
PROCRASTINATE_TABLES = ("events", "periodic_defers", "jobs", "workers")


def upgrade() -> None:
    # procrastinate's own schema, as shipped with the pinned version (pyproject); a later
    # version's upgrade applies its files under procrastinate/sql/migrations.
    op.execute(SchemaManager.get_schema())
    op.create_table(
        "schedules",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("cron", sa.String(120), nullable=True),
        sa.Column("every_s", sa.Integer(), nullable=True),
        sa.Column("timezone", sa.String(64), nullable=False),
        sa.Column("prompt", sa.Text(), nullable=True),
        sa.Column("workflow", sa.String(200), nullable=True),
        sa.Column("sweep", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("mode", sa.String(16), nullable=False),
        sa.Column("notify", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("conversation_id", sa.Uuid(), nullable=True),
        sa.Column("next_run_at", TS, nullable=True),
        sa.Column("sweep_state", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"], ["users.id"], name=op.f("fk_schedules_owner_id_users"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["agent_conversations.id"],
            name=op.f("fk_schedules_conversation_id_agent_conversations"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_schedules")),
    )
    op.create_index(op.f("ix_schedules_owner_id"), "schedules", ["owner_id"])
    op.create_index(
        "ix_schedules_due", "schedules", ["next_run_at"], postgresql_where=sa.text("enabled")
    )
    op.create_table(
        "schedule_runs",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("schedule_id", sa.Uuid(), nullable=False),
        sa.Column("due_at", TS, nullable=True),
        sa.Column("trigger", sa.String(16), nullable=False),
        sa.Column("started_at", TS, nullable=False),
        sa.Column("finished_at", TS, nullable=True),
        sa.Column("status", sa.String(24), nullable=False),
        sa.Column("message_id", sa.BigInteger(), nullable=True),
        sa.Column("error", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("job_id", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(
            ["schedule_id"],
            ["schedules.id"],
            name=op.f("fk_schedule_runs_schedule_id_schedules"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_schedule_runs")),
        sa.UniqueConstraint("schedule_id", "due_at", name="uq_schedule_runs_schedule_id_due_at"),
    )
    op.create_index(
        "ix_schedule_runs_schedule_started", "schedule_runs", ["schedule_id", "started_at"]
    )
    op.create_table(
        "schedule_deliveries",
        sa.Column("id", sa.BigInteger(), autoincrement=True, nullable=False),
        sa.Column("run_id", sa.Uuid(), nullable=False),
        sa.Column("channel", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["schedule_runs.id"],
            name=op.f("fk_schedule_deliveries_run_id_schedule_runs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_schedule_deliveries")),
    )
    op.create_index(op.f("ix_schedule_deliveries_run_id"), "schedule_deliveries", ["run_id"])


def downgrade() -> None:
    op.drop_table("schedule_deliveries")
    op.drop_table("schedule_runs")
    op.drop_table("schedules")
    for table in PROCRASTINATE_TABLES:
        op.execute(f"DROP TABLE IF EXISTS procrastinate_{table} CASCADE")
    op.execute(
        "DROP TYPE IF EXISTS procrastinate_job_status, procrastinate_job_event_type,"
        " procrastinate_job_to_defer_v1 CASCADE"
    )
