"""Who a request acts for, below every domain: the RBAC dependency (`backend/deps.py`) records
the person once per request; Superset's client in person mode (`backend/superset/person.py`)
reads it, and the platform's own work (sync) runs `as_service()`.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from backend.config import Settings


@dataclass(frozen=True)
class Person:
    user_id: uuid.UUID
    settings: Settings
    factory: async_sessionmaker[AsyncSession]


_SERVICE = object()
_acting: ContextVar[Person | object | None] = ContextVar("superset_acting", default=None)


def acting_as(person: Person) -> None:
    """The person every Superset request of this request (task) is made for."""
    _acting.set(person)


def current() -> Person | None:
    """The acting person in person mode, else None (service mode or `as_service`)."""
    found = _acting.get()
    return found if isinstance(found, Person) else None


def is_service() -> bool:
    return _acting.get() is _SERVICE


@contextmanager
def as_service() -> Iterator[None]:
    """The platform's own work (sync): the service account, whatever the mode."""
    token = _acting.set(_SERVICE)
    try:
        yield
    finally:
        _acting.reset(token)
