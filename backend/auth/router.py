"""Identity routes: login, me, service tokens, user administration."""

from __future__ import annotations

from fastapi import APIRouter, Request, status

from backend.auth import service
from backend.auth.schemas import (
    LoginRequest,
    LoginResponse,
    MeRead,
    ServiceTokenRequest,
    TokenResponse,
    UserAdminRead,
    UserCreate,
    UserPage,
    UserRead,
)
from backend.deps import Admin, CurrentPrincipal, SessionDep, SettingsDep
from backend.errors import responses

router = APIRouter(tags=["auth"])


@router.post("/api/auth/login", response_model=LoginResponse, responses=responses(401, 422))
async def login(body: LoginRequest, request: Request, session: SessionDep, settings: SettingsDep):
    """Exchange a username and password for a user JWT."""
    return await service.login(
        session=session,
        settings=settings,
        directory=request.app.state.ldap,
        username=body.username,
        password=body.password,
        request_id=request.state.request_id,
    )


@router.get("/api/auth/me", response_model=MeRead, responses=responses(401))
async def me(principal: CurrentPrincipal, session: SessionDep) -> MeRead:
    """The user behind the token (the on-behalf-of user for a service call) and its source."""
    source = await service.source_of(session=session, user_id=principal.user_id)
    return MeRead(
        id=principal.user_id, username=principal.username, roles=principal.roles, source=source
    )


@router.post("/api/auth/service-token", response_model=TokenResponse, responses=responses(401, 422))
async def service_token(
    body: ServiceTokenRequest, request: Request, session: SessionDep, settings: SettingsDep
):
    """Exchange service client credentials for a short-lived service JWT."""
    return await service.service_token(
        session=session,
        settings=settings,
        client_id=body.client_id,
        client_secret=body.client_secret,
        request_id=request.state.request_id,
    )


@router.post(
    "/api/admin/users",
    response_model=UserRead,
    status_code=status.HTTP_201_CREATED,
    responses=responses(401, 403, 409, 422),
)
async def create_user(body: UserCreate, principal: Admin, session: SessionDep):
    """Create a user (admin)."""
    return await service.create_user(session=session, actor=principal, data=body)


@router.get("/api/admin/users", response_model=UserPage, responses=responses(401, 403))
async def list_users(principal: Admin, session: SessionDep) -> UserPage:
    """Every account with its source and last sign-in (admin)."""
    users = await service.list_users(session=session)
    return UserPage(items=[UserAdminRead.model_validate(u) for u in users])
