"""Where a dashboard's charts come from and run: the protocol both sources implement.

Two implementations: the built-in domain (`dashboards/builtin.py`: each chart's SQL run here,
read-only) and Superset (`superset/source.py`: each chart's saved query run by that
environment's Superset). The dashboards domain asks `sources.of(definition)` for a version's
source and calls it; it never asks which one it has. A source is wired at app construction
(`sources.install`), so `dashboards/` imports nothing of `superset/`.

A source answers for a version's definition (dashboard definitions are immutable versions):
- `commit`: the definition a commit's changes make, checked as a whole before it is stored;
- `run_charts`: each chart's outcome, for validation, deploy and health;
- `chart_data`: one chart's rows, as the dashboard page draws it;
- `deploy`: what the environment itself needs before the platform records a deployment;
- `chart_links`: where each chart of a version opens outside the platform (`explore_url`);
- `links`: where its dashboards live outside the platform (the summary's `source`);
- `live`: health runs its charts anew each time it is asked (its data and charts change
  outside the platform); otherwise health reads the runs validation and deploys stored.

Every method is given the version (or the `Target` a ref resolved to), never "main" by
assumption: a version named by a branch or an id is run, drawn and deployed the same way, and
what a source adds to a version's charts for the browser belongs beside these methods.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from sqlalchemy import ColumnElement
from sqlalchemy.ext.asyncio import AsyncSession

from backend.config import Settings
from backend.dashboards.definition import Change
from backend.dashboards.models import Dashboard, DashboardVersion
from backend.dashboards.schemas import ChartDataRead, SupersetSource

Definition = dict[str, Any]
Chart = dict[str, Any]


@dataclass(frozen=True)
class Outcome:
    """What one chart's run came to: `ok`, `warning` (no rows) or `failing`."""

    status: str
    message: str
    elapsed_ms: float
    row_count: int | None
    code: str | None = None  # the error code of a chart its source could not run


@dataclass(frozen=True)
class Target:
    """A resolved ref: the version it names and how the caller named it."""

    version: DashboardVersion
    ref: str


class DashboardSource(Protocol):
    """One kind of dashboard: how its versions are edited, run, drawn and deployed."""

    live: bool

    def claims(self, definition: Definition) -> bool:
        """True when `definition` is one of this source's versions."""
        ...

    async def commit(
        self, *, settings: Settings, definition: Definition, changes: list[Change]
    ) -> Definition:
        """The new definition; EditError for a change that does not apply, an AppError
        (422) for a result that is refused."""
        ...

    async def run_charts(
        self, *, settings: Settings, target: Target, charts: list[Chart]
    ) -> list[Outcome]:
        """Each chart's outcome, in order, for the version `target` names."""
        ...

    async def chart_data(
        self,
        *,
        settings: Settings,
        version: DashboardVersion,
        chart: Chart,
        environment: str | None,
        where: dict[str, Any],
    ) -> ChartDataRead:
        """The chart's rows; an AppError envelope naming `where` when it cannot be drawn."""
        ...

    async def deploy(
        self,
        *,
        session: AsyncSession,
        settings: Settings,
        dashboard: Dashboard,
        version: DashboardVersion,
        environment: str,
    ) -> None:
        """Put `version` into `environment` (before anything is recorded: a refusal records
        nothing)."""
        ...

    async def chart_links(
        self, *, settings: Settings, version: DashboardVersion
    ) -> dict[str, dict[str, str]]:
        """Chart key -> {environment: where that chart opens outside the platform}."""
        ...

    async def links(
        self, *, session: AsyncSession, settings: Settings | None, dashboard_ids: Iterable[int]
    ) -> dict[int, SupersetSource]:
        """Where each of these dashboards lives outside the platform (those that do)."""
        ...

    async def hidden(self) -> ColumnElement[bool] | None:
        """A WHERE clause on `Dashboard` that drops what the acting person may not see (their
        Superset's permissions in person mode); None when nothing is hidden."""
        ...

    async def check_visible(self, session: AsyncSession, dashboard_id: int) -> None:
        """NotFound when the acting person may not see this dashboard."""
        ...
