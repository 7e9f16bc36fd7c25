"""Personal access token routes: create, list, revoke (own tokens only)."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Response, status

from backend.access_tokens import service
from backend.access_tokens.schemas import AccessTokenCreate, AccessTokenCreated, AccessTokenPage
from backend.deps import CurrentPrincipal, SessionDep
from backend.errors import Forbidden, responses
from backend.principal import Principal

router = APIRouter(tags=["auth"])


async def _managing(principal: CurrentPrincipal) -> Principal:
    """Tokens are managed by a signed-in person or a `full` token, never a `read` one (it
    would mint itself a wider token)."""
    if principal.token_scope == "read":
        raise Forbidden("A read-only access token cannot manage access tokens")
    return principal


Manager = Annotated[Principal, Depends(_managing)]


@router.post(
    "/api/auth/tokens",
    response_model=AccessTokenCreated,
    status_code=status.HTTP_201_CREATED,
    responses=responses(401, 403, 422),
)
async def create_token(body: AccessTokenCreate, principal: Manager, session: SessionDep):
    """Create a personal access token; its secret is shown in this answer only."""
    return await service.create(session=session, actor=principal, data=body)


@router.get("/api/auth/tokens", response_model=AccessTokenPage, responses=responses(401))
async def list_tokens(principal: CurrentPrincipal, session: SessionDep):
    """The caller's own tokens, never their secrets."""
    return await service.list_own(session=session, actor=principal)


@router.delete(
    "/api/auth/tokens/{token_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    responses=responses(401, 403, 404, 422),
)
async def revoke_token(token_id: uuid.UUID, principal: Manager, session: SessionDep) -> Response:
    """Revoke one of the caller's tokens; someone else's id is 404."""
    await service.revoke(session=session, actor=principal, token_id=token_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
