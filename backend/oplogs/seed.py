"""Demo data for oplogs: two weeks of operational history, written once."""

from __future__ import annotations

from sqlalchemy import exists, select
from sqlalchemy.ext.asyncio import AsyncSession

from backend.config import Settings
from backend.db import utcnow
from backend.oplogs.history import demo_history
from backend.oplogs.models import OperationalLog

# Every seeded entry carries this in `details`, which is how a second run knows to do nothing.
DEMO_MARK = {"demo": True}


async def seed(*, session: AsyncSession, settings: Settings) -> None:
    """Idempotent: safe to run on every start."""
    already = await session.scalar(
        select(exists().where(OperationalLog.details.contains(DEMO_MARK)))
    )
    if already:
        return
    now = utcnow().replace(second=0, microsecond=0)
    session.add_all(
        OperationalLog(
            created_at=e.at,
            level=e.level,
            source=e.source,
            message=e.message,
            dashboard_id=e.dashboard_id,
            details={**e.details, **DEMO_MARK},
        )
        for e in demo_history(now)
    )
