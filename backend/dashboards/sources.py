"""The dashboard sources this process has: each installed one, then the built-in domain.

`install` is called once at app construction for each source beside the built-in one
(`backend/main.py`); `of` finds the source of a version's definition, so the domain never
asks which kind of dashboard it holds.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import ColumnElement, and_
from sqlalchemy.ext.asyncio import AsyncSession

from backend.config import Settings
from backend.dashboards.builtin import BUILTIN
from backend.dashboards.schemas import SupersetSource
from backend.dashboards.source import DashboardSource, Definition

_installed: list[DashboardSource] = []


def install(source: DashboardSource) -> None:
    """Add a source (once per class: building a second app installs nothing twice)."""
    if not any(type(one) is type(source) for one in _installed):
        _installed.append(source)


def of(definition: Definition) -> DashboardSource:
    """The source whose version `definition` is; the built-in domain's otherwise."""
    return next((one for one in _installed if one.claims(definition)), BUILTIN)


async def hidden() -> ColumnElement[bool] | None:
    """What the acting person may not see, from every source (None: nothing hidden)."""
    clauses = [c for c in [await one.hidden() for one in (*_installed, BUILTIN)] if c is not None]
    return and_(*clauses) if clauses else None


async def check_visible(session: AsyncSession, dashboard_id: int) -> None:
    """NotFound when a source hides this dashboard from the acting person."""
    for one in (*_installed, BUILTIN):
        await one.check_visible(session, dashboard_id)


async def links(
    *, session: AsyncSession, settings: Settings | None, dashboard_ids: Iterable[int]
) -> dict[int, SupersetSource]:
    """Where each dashboard lives outside the platform, from every source."""
    ids = list(dashboard_ids)
    found: dict[int, SupersetSource] = {}
    for one in (*_installed, BUILTIN):
        found.update(await one.links(session=session, settings=settings, dashboard_ids=ids))
    return found
