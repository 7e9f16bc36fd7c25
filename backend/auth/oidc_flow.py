"""The OIDC login's three steps: start (state, nonce, PKCE, the browser's cookie), callback
(the state once, the code, the person) and the exchange of the one-time login code.

A state is a row consumed (deleted) by the first callback that names it, and it holds the hash
of a random value the browser that started the login keeps in an HttpOnly cookie: a state
replayed, forged, expired, or brought by another browser is refused. A login code is stored
only as a hash, works once, within `LOGIN_CODE_TTL`.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import urlsplit

import httpx
from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncSession

from backend.auth import external
from backend.auth.models import LoginCode, OidcLogin
from backend.auth.oidc import OidcProvider, failed
from backend.auth.schemas import LoginResponse
from backend.auth.service import issue_login
from backend.codes import Code
from backend.config import Settings
from backend.db import utcnow
from backend.errors import AppError, Unauthorized
from backend.identity.models import User

STATE_TTL = timedelta(minutes=10)
LOGIN_CODE_TTL = timedelta(seconds=60)
COOKIE = "agent_chat_oidc"
COOKIE_PATH = "/api/auth/oidc"


def _hash(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def safe_next(next_path: str | None) -> str:
    """`next` when it is a path of this site; anything else (another host, `//evil`,
    `/\\evil`, a scheme, control characters) becomes `/`."""
    if not next_path or not next_path.startswith("/") or next_path.startswith("//"):
        return "/"
    if "\\" in next_path or any(ord(c) < 0x21 or ord(c) == 0x7F for c in next_path):
        return "/"
    parts = urlsplit(next_path)
    if parts.scheme or parts.netloc:
        return "/"
    return next_path.split("#", 1)[0][:2048] or "/"


@dataclass(frozen=True)
class Started:
    location: str  # the provider's authorization URL
    browser_secret: str  # goes into the HttpOnly cookie, nowhere else
    secure: bool


async def start(
    *, session: AsyncSession, provider: OidcProvider, redirect_uri: str, next_path: str | None
) -> Started:
    """Remember one login (hashed state, the browser's hash, nonce, PKCE verifier) and say where
    to send the browser."""
    state, nonce = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    verifier, browser = secrets.token_urlsafe(64), secrets.token_urlsafe(32)
    try:
        location = await provider.authorization_url(
            redirect_uri=redirect_uri, state=state, nonce=nonce, code_verifier=verifier
        )
    except httpx.HTTPError as exc:
        raise failed("provider_unreachable") from exc
    await session.execute(delete(OidcLogin).where(OidcLogin.created_at < utcnow() - STATE_TTL))
    session.add(
        OidcLogin(
            state_hash=_hash(state),
            browser_hash=_hash(browser),
            nonce=nonce,
            code_verifier=verifier,
            redirect_uri=redirect_uri,
            next_path=safe_next(next_path),
        )
    )
    await session.commit()
    return Started(location, browser, redirect_uri.startswith("https://"))


async def _take_state(
    session: AsyncSession, state: str | None, browser: str | None
) -> OidcLogin | None:
    """The login `state` names, deleted in the same statement (so it works once), when this
    browser started it and it is fresh."""
    if not state:
        return None
    row = await session.scalar(
        delete(OidcLogin).where(OidcLogin.state_hash == _hash(state)).returning(OidcLogin)
    )
    await session.commit()
    if row is None or not browser or row.created_at < utcnow() - STATE_TTL:
        return None
    return row if hmac.compare_digest(row.browser_hash, _hash(browser)) else None


async def callback(
    *,
    session: AsyncSession,
    settings: Settings,
    provider: OidcProvider,
    code: str | None,
    state: str | None,
    browser: str | None,
    request_id: str | None,
) -> str:
    """Where to send the browser back: `next#login_code=...`, or `next#error=NO_ROLE`."""
    login = await _take_state(session, state, browser)
    try:
        if login is None:
            raise failed("bad_state")
        if not code:
            raise failed("no_code")
        identity = await provider.identity(
            code=code,
            redirect_uri=login.redirect_uri,
            code_verifier=login.code_verifier,
            nonce=login.nonce,
        )
    except httpx.HTTPError as exc:
        await _refused(session, "provider_unreachable", request_id)
        raise failed("provider_unreachable") from exc
    except Unauthorized as exc:
        await _refused(session, str(exc.details.get("reason", "sso_failed")), request_id)
        raise
    try:
        user = await external.sign_in(
            session=session, settings=settings, identity=identity, request_id=request_id
        )
    except AppError as exc:
        if exc.code == Code.NO_ROLE:
            return f"{login.next_path}#error={Code.NO_ROLE.value}"
        raise
    login_code = secrets.token_urlsafe(32)
    await session.execute(delete(LoginCode).where(LoginCode.expires_at < utcnow()))
    session.add(
        LoginCode(
            code_hash=_hash(login_code), user_id=user.id, expires_at=utcnow() + LOGIN_CODE_TTL
        )
    )
    await session.commit()
    return f"{login.next_path}#login_code={login_code}"


async def _refused(session: AsyncSession, reason: str, request_id: str | None) -> None:
    external.audit_failure(
        session=session, source="oidc", username=None, reason=reason, request_id=request_id
    )
    await session.commit()


async def exchange(
    *, session: AsyncSession, settings: Settings, login_code: str, request_id: str | None
) -> LoginResponse:
    """The JWT for a fresh, unused login code (the code is gone after this)."""
    user_id = await session.scalar(
        delete(LoginCode)
        .where(LoginCode.code_hash == _hash(login_code), LoginCode.expires_at > utcnow())
        .returning(LoginCode.user_id)
    )
    await session.commit()
    user = await session.get(User, user_id) if user_id is not None else None
    if user is None or not user.is_active or not user.roles:
        await _refused(session, "bad_login_code", request_id)
        raise failed("bad_login_code")
    return issue_login(settings, user)
