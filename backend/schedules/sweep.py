"""A health sweep: every dashboard of an environment checked as the owner (filled in below)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from backend.config import Settings
from backend.schedules.models import Schedule

if TYPE_CHECKING:
    from backend.schedules.firing import Ended


async def run(
    *,
    settings: Settings,
    schedule: Schedule,
    token: str,
    factory: async_sessionmaker[AsyncSession],
) -> Ended:
    raise NotImplementedError
