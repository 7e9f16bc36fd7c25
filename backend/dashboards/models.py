"""Dashboards: immutable definition versions, the `main` ref, branches, environments,
deployments, and validation runs with their per-chart results."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Computed,
    ForeignKey,
    Identity,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB, TSVECTOR
from sqlalchemy.orm import Mapped, mapped_column

from backend.db import Base, Timestamped, utcnow

ENVIRONMENTS = ("staging", "production")
STATUSES = ("ok", "warning", "failing")

# 'simple' config: no stemming, so Russian and English words both match as written.
SEARCH_VECTOR = (
    "setweight(to_tsvector('simple'::regconfig, coalesce(title, '')), 'A') || "
    "setweight(jsonb_to_tsvector('simple'::regconfig, tags, '[\"string\"]'::jsonb), 'B') || "
    "setweight(to_tsvector('simple'::regconfig, coalesce(description, '')), 'C')"
)


class Dashboard(Timestamped, Base):
    __tablename__ = "dashboards"
    __table_args__ = (Index("ix_dashboards_search", "search", postgresql_using="gin"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    title: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    tags: Mapped[list[str]] = mapped_column(JSONB, default=list)
    owner: Mapped[str] = mapped_column(String(64))
    main_version_id: Mapped[int | None] = mapped_column(
        ForeignKey("dashboard_versions.id", use_alter=True)
    )
    search: Mapped[str] = mapped_column(TSVECTOR, Computed(SEARCH_VECTOR, persisted=True))


class DashboardVersion(Base):
    """Immutable definition: {charts: [{key, title, type, datasource, sql, expected_columns}]}"""

    __tablename__ = "dashboard_versions"
    __table_args__ = (Index("ix_dashboard_versions_dashboard_id", "dashboard_id"),)

    id: Mapped[int] = mapped_column(Integer, Identity(), primary_key=True)
    dashboard_id: Mapped[int] = mapped_column(ForeignKey("dashboards.id", ondelete="CASCADE"))
    parent_version_id: Mapped[int | None] = mapped_column(ForeignKey("dashboard_versions.id"))
    definition: Mapped[dict[str, Any]] = mapped_column(JSONB)
    author: Mapped[str] = mapped_column(String(64))
    message: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Branch(Timestamped, Base):
    __tablename__ = "dashboard_branches"
    __table_args__ = (UniqueConstraint("dashboard_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, Identity(), primary_key=True)
    dashboard_id: Mapped[int] = mapped_column(ForeignKey("dashboards.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(64))
    base_version_id: Mapped[int] = mapped_column(ForeignKey("dashboard_versions.id"))
    head_version_id: Mapped[int] = mapped_column(ForeignKey("dashboard_versions.id"))
    created_by: Mapped[str] = mapped_column(String(64))


class ValidationRun(Base):
    __tablename__ = "dashboard_validation_runs"
    __table_args__ = (
        CheckConstraint("status IN ('ok', 'warning', 'failing')", name="status"),
        Index("ix_dashboard_validation_runs_version", "version_id", text("started_at DESC")),
        Index("ix_dashboard_validation_runs_dashboard", "dashboard_id", text("started_at DESC")),
    )

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    dashboard_id: Mapped[int] = mapped_column(ForeignKey("dashboards.id", ondelete="CASCADE"))
    version_id: Mapped[int] = mapped_column(ForeignKey("dashboard_versions.id"))
    ref: Mapped[str] = mapped_column(String(128))
    status: Mapped[str] = mapped_column(String(16))
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    elapsed_ms: Mapped[float] = mapped_column(default=0.0)
    triggered_by: Mapped[str] = mapped_column(String(64))


class ChartResult(Base):
    __tablename__ = "dashboard_chart_results"
    __table_args__ = (
        CheckConstraint("status IN ('ok', 'warning', 'failing')", name="status"),
        Index("ix_dashboard_chart_results_run_id", "run_id"),
    )

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    run_id: Mapped[int] = mapped_column(
        ForeignKey("dashboard_validation_runs.id", ondelete="CASCADE")
    )
    chart_key: Mapped[str] = mapped_column(String(64))
    chart_title: Mapped[str] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(16))
    message: Mapped[str] = mapped_column(Text, default="")
    elapsed_ms: Mapped[float] = mapped_column(default=0.0)
    row_count: Mapped[int | None] = mapped_column()
    # A Superset chart that failed: the kind of failure (the message is Superset's own).
    error_code: Mapped[str | None] = mapped_column(String(64))


class Deployment(Base):
    __tablename__ = "dashboard_deployments"
    __table_args__ = (
        CheckConstraint("environment IN ('staging', 'production')", name="environment"),
        Index("ix_dashboard_deployments_dashboard", "dashboard_id", text("deployed_at DESC")),
    )

    id: Mapped[int] = mapped_column(Integer, Identity(), primary_key=True)
    dashboard_id: Mapped[int] = mapped_column(ForeignKey("dashboards.id", ondelete="CASCADE"))
    environment: Mapped[str] = mapped_column(String(16))
    version_id: Mapped[int] = mapped_column(ForeignKey("dashboard_versions.id"))
    ref: Mapped[str] = mapped_column(String(128))
    forced: Mapped[bool] = mapped_column(default=False)
    deployed_by: Mapped[str] = mapped_column(String(64))
    deployed_at: Mapped[datetime] = mapped_column(default=utcnow)
    validation_run_id: Mapped[int | None] = mapped_column(
        ForeignKey("dashboard_validation_runs.id")
    )


class EnvironmentState(Base):
    """What each environment serves now: the version of its latest deployment."""

    __tablename__ = "dashboard_environments"
    __table_args__ = (
        CheckConstraint("environment IN ('staging', 'production')", name="environment"),
    )

    dashboard_id: Mapped[int] = mapped_column(
        ForeignKey("dashboards.id", ondelete="CASCADE"), primary_key=True
    )
    environment: Mapped[str] = mapped_column(String(16), primary_key=True)
    version_id: Mapped[int] = mapped_column(ForeignKey("dashboard_versions.id"))
    deployment_id: Mapped[int] = mapped_column(ForeignKey("dashboard_deployments.id"))
