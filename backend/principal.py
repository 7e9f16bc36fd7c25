"""The acting principal: a user, optionally acting through a service client (dual identity)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from backend.identity.roles import Role, satisfies


@dataclass(frozen=True)
class Principal:
    user_id: uuid.UUID
    username: str
    roles: list[str]
    service_client_id: str | None = None
    request_id: str | None = None
    # The agent run (e.g. one diagnosis) a service call belongs to: `X-Run-Id`, honoured only
    # with the service identity; every audit row written for the call carries it.
    run_id: str | None = None
    # Set when the user is acting through a personal access token: its scope ("read" narrows
    # `roles` to viewer rights; "full" keeps them).
    token_scope: str | None = None
    # The channel a service call comes through (`X-Channel`, e.g. "mcp"), honoured only with
    # the service identity; every audit row written for the call carries it.
    channel: str | None = None

    def has(self, role: Role) -> bool:
        return satisfies(self.roles, role)
