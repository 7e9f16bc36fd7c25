"""The short-lived user credential a firing acts with: issued for its owner and that firing
only, never stored, expiring with the run's deadline."""

from __future__ import annotations

import time
import uuid

import jwt

from backend.config import Settings


def issue(settings: Settings, *, owner_id: uuid.UUID, roles: list[str], run_id: uuid.UUID) -> str:
    """A user JWT for `owner_id` with the roles they hold now, valid until the run's deadline;
    `fir` names the firing it was issued for (audit and logs can tell it from a person's)."""
    now = int(time.time())
    payload = {
        "sub": str(owner_id),
        "roles": roles,
        "typ": "user",
        "iat": now,
        "exp": now + settings.schedules.run_deadline_s,
        "iss": settings.jwt.issuer,
        "aud": settings.jwt.audience,
        "jti": uuid.uuid4().hex,
        "fir": str(run_id),
    }
    return jwt.encode(payload, settings.jwt_key, algorithm="HS256")
