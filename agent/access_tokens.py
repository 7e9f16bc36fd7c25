"""Personal access tokens on the agent's side: only the backend can say who one acts for, so
each is checked there (`GET /api/auth/me` on the token's behalf), never remembered here: a
revoked token stops at its next request."""

from __future__ import annotations

from collections.abc import Callable

from agent.auth import AuthError, TokenCheck, User
from agent.backend_client import BackendClient, BackendError
from agent.errors import Unavailable

INVALID = "Invalid or expired access token"


def token_checker(client: Callable[[], BackendClient | None]) -> TokenCheck:
    """A TokenCheck over the backend client `client()` returns (None while starting up)."""

    async def check(token: str) -> User:
        backend = client()
        if backend is None:
            raise Unavailable("The agent is starting; try again in a moment.")
        try:
            body = await backend.request("GET", "/api/auth/me", user_token=token)
        except BackendError as exc:
            if exc.status == 401:
                raise AuthError(INVALID) from exc
            raise Unavailable("The platform could not check the access token.") from exc
        return User(
            user_id=str(body["id"]),
            roles=tuple(str(role) for role in body["roles"]),
            token=token,
            username=str(body["username"]),
        )

    return check
