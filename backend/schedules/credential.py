"""The short-lived user credential a firing acts with: issued for its owner and that firing
only, never stored, expiring with the run's deadline."""

from __future__ import annotations

import uuid

from backend.config import Settings
from backend.identity import tokens


def issue(settings: Settings, *, owner_id: uuid.UUID, roles: list[str], run_id: uuid.UUID) -> str:
    """A user JWT for `owner_id` with the roles they hold now, valid until the run's deadline;
    `fir` names the firing it was issued for (audit and logs can tell it from a person's)."""
    token, _ttl = tokens.issue(
        settings,
        sub=str(owner_id),
        roles=roles,
        typ="user",
        ttl_s=settings.schedules.run_deadline_s,
        extra={"fir": str(run_id)},
    )
    return token
