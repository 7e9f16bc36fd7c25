"""Demo data for knowledge."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from backend.config import Settings


async def seed(*, session: AsyncSession, settings: Settings) -> None:
    """Idempotent: safe to run on every start."""
