"""FastAPI dependencies: settings, DB session, the acting principal, RBAC, pagination."""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Annotated

from fastapi import Depends, Header, Query, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy import bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession

from backend import acting
from backend.config import Settings
from backend.errors import Forbidden, Unauthorized, Unprocessable
from backend.idempotency import service as idempotency
from backend.identity import access_tokens, tokens
from backend.identity.models import ServiceClient, User
from backend.identity.roles import Role
from backend.principal import Principal

RUN_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
CHANNELS = frozenset({"mcp"})

# An agent write's key (its answer was lost, it is sent again): agent-only and not part of the
# browser's API, so kept out of the OpenAPI document.
IdempotencyKey = Annotated[
    str | None,
    Header(alias="Idempotency-Key", min_length=1, max_length=64, include_in_schema=False),
]


async def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


SettingsDep = Annotated[Settings, Depends(get_settings)]


async def get_session(request: Request) -> AsyncIterator[AsyncSession]:
    async with request.app.state.session_factory() as session:
        yield session


SessionDep = Annotated[AsyncSession, Depends(get_session)]

_bearer = HTTPBearer(auto_error=False, description="User JWT, or service JWT with X-On-Behalf-Of")


async def _active_user(session: AsyncSession, sub: str) -> User:
    try:
        user_id = uuid.UUID(sub)
    except ValueError as exc:
        raise Unauthorized("Invalid token") from exc
    user = await session.get(User, user_id)
    if user is None or not user.is_active:
        raise Unauthorized("User no longer exists")
    return user


async def _active_service_client(
    settings: Settings, session: AsyncSession, token: str
) -> ServiceClient:
    """The service client behind `token`; a refusal says `details.credential = "service"` so
    the caller knows to renew its service token rather than blame the user's."""
    try:
        service = tokens.verify(settings, token, expected="service")
        client = await session.scalar(
            select(ServiceClient).where(ServiceClient.client_id == service.sub)
        )
        if client is None or not client.is_active:
            raise Unauthorized("Service client no longer exists")
    except Unauthorized as exc:
        exc.details = {**exc.details, "credential": "service"}
        raise
    return client


async def get_principal(
    request: Request,
    settings: SettingsDep,
    session: SessionDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    on_behalf_of: Annotated[str | None, Header(alias="X-On-Behalf-Of")] = None,
    # The agent's own header (docs/api.md, "Diagnosis"), so not in every route's schema.
    run_id: Annotated[str | None, Header(alias="X-Run-Id", include_in_schema=False)] = None,
    channel: Annotated[str | None, Header(alias="X-Channel", include_in_schema=False)] = None,
) -> Principal:
    """User JWT (or personal access token) alone, or service JWT + X-On-Behalf-Of user JWT
    (or token); RBAC uses the user's DB roles, narrowed by a token's scope.

    `X-Run-Id` and `X-Channel` are read only with the service identity (a browser's own calls
    ignore them). A write's `Idempotency-Key` is claimed here, for the user, in the session the
    write commits (backend/idempotency/service.py): every signed-in write route passes here.
    """
    principal = await _principal(
        request, settings, session, credentials, on_behalf_of, run_id, channel
    )
    await idempotency.claim(session=session, request=request, user_id=principal.user_id)
    return principal


async def _principal(
    request: Request,
    settings: Settings,
    session: AsyncSession,
    credentials: HTTPAuthorizationCredentials | None,
    on_behalf_of: str | None,
    run_id: str | None,
    channel: str | None,
) -> Principal:
    if credentials is None or credentials.scheme.lower() != "bearer":
        raise Unauthorized("Missing bearer token")
    request_id = getattr(request.state, "request_id", None)
    if on_behalf_of is None:
        if access_tokens.is_access_token(credentials.credentials):
            return await _token_principal(session, credentials.credentials, request_id=request_id)
        claims = tokens.verify(settings, credentials.credentials, expected="user")
        user = await _active_user(session, claims.sub)
        return Principal(user.id, user.username, list(user.roles), None, request_id)
    if run_id is not None and not RUN_ID.fullmatch(run_id):
        raise Unprocessable("X-Run-Id must be 1-64 letters, digits, '-' or '_'")
    if channel is not None and channel not in CHANNELS:
        raise Unprocessable(f"X-Channel must be one of {sorted(CHANNELS)}")
    user_token = on_behalf_of.removeprefix("Bearer ").strip()
    if access_tokens.is_access_token(user_token):
        client = await _active_service_client(settings, session, credentials.credentials)
        principal = await _token_principal(session, user_token, request_id=request_id)
        return replace(
            principal, service_client_id=client.client_id, run_id=run_id, channel=channel
        )
    client_id, user = await _dual_identity(settings, session, credentials.credentials, user_token)
    roles = list(user.roles)
    return Principal(user.id, user.username, roles, client_id, request_id, run_id, channel=channel)


async def _token_principal(
    session: AsyncSession, token: str, *, request_id: str | None
) -> Principal:
    """The principal a personal access token acts as: its user's current roles, narrowed by
    its scope."""
    found = await access_tokens.authenticate(session=session, token=token)
    return Principal(
        found.user_id, found.username, found.roles, None, request_id, token_scope=found.scope
    )


# Built once (every agent request runs it): constructing an ORM select is a good part of an
# authenticated request's CPU otherwise.
_DUAL_IDENTITY = select(
    User,
    select(ServiceClient.is_active)
    .where(ServiceClient.client_id == bindparam("client_id"))
    .scalar_subquery(),
).where(User.id == bindparam("user_id"))


async def _dual_identity(
    settings: Settings, session: AsyncSession, service_token: str, user_token: str
) -> tuple[str, User]:
    """The service client and the user it acts for, both active, in one query when both
    tokens verify (every agent request); otherwise the checks one by one, so a refusal names
    the same credential as ever: the service's first."""
    try:
        service = tokens.verify(settings, service_token, expected="service")
        claims = tokens.verify(settings, user_token, expected="user")
        user_id = uuid.UUID(claims.sub)
    except (Unauthorized, ValueError):
        service = None
    if service is not None:
        found = (
            await session.execute(_DUAL_IDENTITY, {"client_id": service.sub, "user_id": user_id})
        ).one_or_none()
        if found is not None and found[1] and found[0].is_active:
            return service.sub, found[0]
    client = await _active_service_client(settings, session, service_token)
    claims = tokens.verify(settings, user_token, expected="user")
    return client.client_id, await _active_user(session, claims.sub)


CurrentPrincipal = Annotated[Principal, Depends(get_principal)]


def require(role: Role) -> Callable[[Request, Principal], Awaitable[Principal]]:
    """A dependency that lets the principal through when its user holds `role` or higher."""

    async def _check(request: Request, principal: CurrentPrincipal) -> Principal:
        if not principal.has(role):
            raise Forbidden(f"This operation requires the {role.value} role")
        # Superset as the person: this request's Superset calls carry this person's session.
        settings: Settings = request.app.state.settings
        acting.acting_as(
            acting.Person(principal.user_id, settings, request.app.state.session_factory)
        )
        return principal

    return _check


Viewer = Annotated[Principal, Depends(require(Role.viewer))]
Editor = Annotated[Principal, Depends(require(Role.editor))]
Admin = Annotated[Principal, Depends(require(Role.admin))]


async def require_service(principal: CurrentPrincipal) -> Principal:
    if principal.service_client_id is None:
        raise Forbidden("This operation is reserved to the agent service")
    return principal


AgentPrincipal = Annotated[Principal, Depends(require_service)]


@dataclass(frozen=True)
class PageParams:
    limit: int
    offset: int


async def page_params(
    settings: SettingsDep,
    limit: Annotated[int | None, Query(ge=1, description="Capped at the server maximum")] = None,
    offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
) -> PageParams:
    chosen = limit or settings.api.default_page_size
    return PageParams(limit=min(chosen, settings.api.max_page_size), offset=offset)


Page = Annotated[PageParams, Depends(page_params)]
