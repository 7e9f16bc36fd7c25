"""Tokens already verified, for both processes' JWT checks.

The agent sends the same two tokens (its service JWT and the user's) with every request of a
turn, and a turn shows the agent the user's JWT three times. A token's signature and claims
never change, so a remembered token is only checked for expiry again. The key must include the
verifying secret, so that a token is only ever good under the secret that verified it.
"""

from __future__ import annotations

import time
from collections.abc import Hashable
from typing import Generic, TypeVar

V = TypeVar("V")
LIMIT = 4096


class Expired(Exception):
    """A remembered token whose time is up (it is forgotten)."""


class Verified(Generic[V]):
    """What verifying each token gave, until the token expires; the oldest entry makes room."""

    def __init__(self, limit: int = LIMIT) -> None:
        self.limit = limit
        self._items: dict[Hashable, tuple[V, float]] = {}

    def get(self, key: Hashable) -> V | None:
        """The remembered value, None if the token was never verified here; Expired when its
        time is up."""
        known = self._items.get(key)
        if known is None:
            return None
        value, expires = known
        if expires <= time.time():
            del self._items[key]
            raise Expired
        return value

    def put(self, key: Hashable, value: V, expires: float) -> None:
        if len(self._items) >= self.limit:
            del self._items[next(iter(self._items))]  # the oldest entry
        self._items[key] = (value, expires)

    def clear(self) -> None:
        self._items.clear()
