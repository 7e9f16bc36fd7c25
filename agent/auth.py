"""Stateless user-JWT checks (FR-020): the same HS256 secret as the backend, no database.

`UserAuthMiddleware` guards every route under the Gradio mount, including `/config`, the queue,
upload and file routes, so nothing of the agent answers an unauthenticated caller.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

import jwt
from starlette.types import ASGIApp, Receive, Scope, Send

from agent.config import Settings
from agent.errors import AgentError, Code, Unauthorized
from common.verified import Expired, Verified

log = logging.getLogger(__name__)

# Routes of Gradio's own web page and its assets, served only in development.
PAGE_PREFIXES = (
    "/assets/",
    "/static/",
    "/svelte/",
    "/favicon.ico",
    "/theme.css",
    "/manifest.json",
    "/pwa_icon",
    "/robots.txt",
    "/monitoring",
    "/gradio_api/monitoring",
    "/gradio_api/vibe",
    "/gradio_api/undo-vibe",
    "/gradio_api/runs",
    "/gradio_api/run-history",
    "/gradio_api/dev/",
    "/dev/",
)


class AuthError(Unauthorized):
    """The caller has no valid user JWT (UNAUTHORIZED, or TOKEN_EXPIRED)."""

    def __init__(self, message: str, code: Code = Code.UNAUTHORIZED) -> None:
        super().__init__(message, code=code)


@dataclass(frozen=True)
class User:
    """Who the verified token speaks for."""

    user_id: str
    roles: tuple[str, ...]
    token: str
    username: str


def bearer_token(headers: Mapping[str, str]) -> str | None:
    """The token of an `Authorization: Bearer ...` header, if any (header names any case)."""
    for name, value in headers.items():
        if name.lower() == "authorization":
            scheme, _, token = value.partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
    return None


_VERIFIED: Verified[User] = Verified()  # common/verified.py

ACCESS_TOKEN_PREFIX = "acp_"  # a personal access token (CONTRACT.md): only the backend knows it
TokenCheck = Callable[[str], Awaitable[User]]
"""Asks the backend who a personal access token acts for (agent/access_tokens.py)."""


async def verify_caller(
    settings: Settings, token: str | None, check_token: TokenCheck | None
) -> User:
    """The caller of a user JWT (checked here, no database) or of a personal access token
    (checked by the backend on every call: a revoked one stops at once)."""
    if token and token.startswith(ACCESS_TOKEN_PREFIX) and check_token is not None:
        return await check_token(token)
    return verify_user(settings, token)


def verify_user(settings: Settings, token: str | None) -> User:
    """Check signature (HS256 only), expiry, issuer, audience and `typ == "user"`."""
    if not token:
        raise AuthError("Sign in: a bearer token is required")
    assert settings.jwt_secret is not None
    secret = settings.jwt_secret.get_secret_value()
    try:
        known = _VERIFIED.get((secret, token))
    except Expired as exc:
        raise AuthError("Your session has expired: sign in again", Code.TOKEN_EXPIRED) from exc
    if known is not None:
        return known
    user, expires = _decode(settings, secret, token)
    _VERIFIED.put((secret, token), user, expires)
    return user


def _decode(settings: Settings, secret: str, token: str) -> tuple[User, float]:
    try:
        claims = jwt.decode(
            token,
            secret,
            algorithms=["HS256"],
            audience=settings.jwt.audience,
            issuer=settings.jwt.issuer,
            options={"require": ["sub", "typ", "exp", "iat", "iss", "aud"]},
        )
    except jwt.ExpiredSignatureError as exc:
        raise AuthError("Your session has expired: sign in again", Code.TOKEN_EXPIRED) from exc
    except jwt.PyJWTError as exc:
        raise AuthError("Invalid token") from exc
    sub, roles = claims.get("sub"), claims.get("roles", [])
    if claims.get("typ") != "user" or not isinstance(sub, str) or not isinstance(roles, list):
        raise AuthError("A user token is required")
    username = claims.get("username") or claims.get("name") or sub
    user = User(user_id=sub, roles=tuple(str(r) for r in roles), token=token, username=username)
    return user, float(claims["exp"])


def _is_page(path: str) -> bool:
    return path in ("", "/") or path.startswith(PAGE_PREFIXES)


class UserAuthMiddleware:
    """ASGI middleware: every request under `prefix` needs a valid user JWT; 401 otherwise.

    Outside development, Gradio's built-in page and its assets answer 404 even with a token.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        settings: Settings,
        prefix: str,
        check_token: TokenCheck | None = None,
    ) -> None:
        self.app = app
        self.settings = settings
        self.prefix = prefix.rstrip("/")
        self.check_token = check_token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] not in ("http", "websocket") or not (
            path == self.prefix or path.startswith(self.prefix + "/")
        ):
            await self.app(scope, receive, send)
            return
        inner = path[len(self.prefix) :]
        if self.settings.env != "development" and _is_page(inner):
            await _reject(scope, send, 404, Code.NOT_FOUND, "Not found")
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        try:
            await verify_caller(self.settings, bearer_token(headers), self.check_token)
        except AuthError as exc:
            await _reject(scope, send, 401, Code.UNAUTHORIZED, exc.message)
            return
        except AgentError as exc:  # the backend could not say who a token is
            await _reject(scope, send, 503, exc.code, exc.message)
            return
        await self.app(scope, receive, send)


async def _reject(scope: Scope, send: Send, status: int, code: str, message: str) -> None:
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 4401 if status == 401 else 4404})
        return
    body = json.dumps({"error": {"code": code, "message": message, "details": {}}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
