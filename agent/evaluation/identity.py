"""Who an evaluation acts as: a real user signed in at the backend, like a person in the chat.

Read tools then run under that user's RBAC, and the agent's dual identity (service JWT plus
X-On-Behalf-Of) is checked as in production.
"""

from __future__ import annotations

import httpx

from agent.backend_client import BackendClient, BackendError
from agent.config import Settings
from agent.context import Context

TIMEOUT = httpx.Timeout(15.0, connect=5.0)


class SetupError(Exception):
    """The evaluation cannot start (backend down, sign-in refused); nothing was run."""


async def sign_in(settings: Settings, *, username: str, password: str) -> Context:
    """The user's Context (token, id, roles) from `POST /api/auth/login`."""
    payload = {"username": username, "password": password}
    try:
        async with httpx.AsyncClient(base_url=settings.backend_url, timeout=TIMEOUT) as http:
            response = await http.post("/api/auth/login", json=payload)
    except httpx.TransportError as exc:
        raise SetupError(
            f"the backend at {settings.backend_url} is not answering ({type(exc).__name__}): "
            "start it (`agent-chat backend` or `agent-chat up`) or set BACKEND_URL"
        ) from exc
    if response.status_code == 401:
        raise SetupError(
            f"could not sign in as {username!r}: wrong user name or password "
            "(set EVAL_PASSWORD, or SEED_<ROLE>_PASSWORD for a demo user)"
        )
    if not response.is_success:
        raise SetupError(f"sign-in at {settings.backend_url} failed: HTTP {response.status_code}")
    body = response.json()
    user = body["user"]
    return Context(
        user_token=str(body["access_token"]),
        user_id=str(user["id"]),
        username=str(user["username"]),
        roles=tuple(str(role) for role in user["roles"]),
        conversation_id="",
    )


async def check_service(client: BackendClient) -> None:
    """The agent's own credentials work (every tool call needs the service JWT)."""
    try:
        await client.service_token()
    except httpx.TransportError as exc:
        raise SetupError(f"the backend stopped answering ({type(exc).__name__})") from exc
    except BackendError as exc:
        raise SetupError(
            "the backend refused the agent's service credentials "
            f"(AGENT_CLIENT_ID / AGENT_CLIENT_SECRET): {exc.message}"
        ) from exc
