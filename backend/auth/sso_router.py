"""Sign-in through the organisation: which providers there are, and the OIDC login's routes."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Cookie, Query, Request
from fastapi.responses import RedirectResponse

from backend.auth import oidc_flow
from backend.auth.ldap import LdapDirectory
from backend.auth.oidc import OidcProvider, failed
from backend.auth.schemas import LoginCodeExchange, LoginResponse, OidcProviderRead, ProvidersRead
from backend.deps import SessionDep, SettingsDep
from backend.errors import responses

router = APIRouter(tags=["auth"])
LOGIN_PATH = "/api/auth/oidc/login"
CALLBACK_PATH = "/api/auth/oidc/callback"


def _provider(request: Request) -> OidcProvider:
    provider: OidcProvider | None = request.app.state.oidc
    if provider is None:
        raise failed("oidc_not_configured")
    return provider


def _redirect_uri(request: Request, public_url: str | None) -> str:
    """`{PUBLIC_URL}/api/auth/oidc/callback`; unset, the address the browser used (the
    gateway's `X-Forwarded-*` headers, else `Host`)."""
    if public_url:
        return public_url.rstrip("/") + CALLBACK_PATH
    headers = request.headers
    proto = headers.get("x-forwarded-proto", request.url.scheme).split(",")[0].strip()
    host = headers.get("x-forwarded-host") or headers.get("host") or request.url.netloc
    return f"{proto}://{host.split(',')[0].strip()}{CALLBACK_PATH}"


@router.get("/api/auth/providers", response_model=ProvidersRead)
async def providers(request: Request) -> ProvidersRead:
    """How people sign in here (no authentication: the login page asks before anyone has)."""
    provider: OidcProvider | None = request.app.state.oidc
    directory: LdapDirectory | None = request.app.state.ldap
    oidc = OidcProviderRead(name=provider.settings.name, login_url=LOGIN_PATH) if provider else None
    return ProvidersRead(ldap=directory is not None, oidc=oidc)


@router.get("/api/auth/oidc/login", status_code=302, responses=responses(401))
async def oidc_login(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    next: Annotated[str | None, Query(max_length=2048)] = None,
) -> RedirectResponse:
    """302 to the provider's login; `next` (a path of this site) is where the person lands."""
    started = await oidc_flow.start(
        session=session,
        provider=_provider(request),
        redirect_uri=_redirect_uri(request, settings.public_url),
        next_path=next,
    )
    response = RedirectResponse(started.location, status_code=302)
    response.set_cookie(
        oidc_flow.COOKIE,
        started.browser_secret,
        max_age=int(oidc_flow.STATE_TTL.total_seconds()),
        path=oidc_flow.COOKIE_PATH,
        secure=started.secure,
        httponly=True,
        samesite="lax",
    )
    response.headers["Cache-Control"] = "no-store"
    return response


@router.get("/api/auth/oidc/callback", status_code=302, responses=responses(401))
async def oidc_callback(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    code: Annotated[str | None, Query(max_length=4096)] = None,
    state: Annotated[str | None, Query(max_length=512)] = None,
    browser: Annotated[str | None, Cookie(alias=oidc_flow.COOKIE)] = None,
) -> RedirectResponse:
    """The provider's return: 302 to `next` with a one-time `login_code` in the fragment."""
    location = await oidc_flow.callback(
        session=session,
        settings=settings,
        provider=_provider(request),
        code=code,
        state=state,
        browser=browser,
        request_id=request.state.request_id,
    )
    response = RedirectResponse(location, status_code=302)
    response.delete_cookie(oidc_flow.COOKIE, path=oidc_flow.COOKIE_PATH)
    response.headers["Cache-Control"] = "no-store"
    return response


@router.post("/api/auth/oidc/exchange", response_model=LoginResponse, responses=responses(401, 422))
async def oidc_exchange(
    body: LoginCodeExchange, request: Request, session: SessionDep, settings: SettingsDep
) -> LoginResponse:
    """A one-time login code for a user JWT (as `POST /api/auth/login` answers)."""
    return await oidc_flow.exchange(
        session=session,
        settings=settings,
        login_code=body.login_code,
        request_id=request.state.request_id,
    )
