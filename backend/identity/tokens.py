"""JWT issue and verification (HS256) and password hashing."""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

import jwt
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from backend.codes import Code
from backend.config import Settings
from backend.errors import Unauthorized
from common.verified import Expired, Verified

TokenType = Literal["user", "service"]
_hasher = PasswordHasher()
# Verified against when the user does not exist, so both failures cost the same time.
_DUMMY_HASH = _hasher.hash("not-a-real-password")


# argon2 costs ~0.25 s of CPU and 64 MiB per call: it runs on these threads, never on the event
# loop (a burst of logins would stall every request), and at most this many at once.
_HASH_THREADS = ThreadPoolExecutor(
    max_workers=min(4, os.cpu_count() or 1), thread_name_prefix="argon2"
)


def _verify(secret_hash: str | None, secret: str) -> bool:
    try:
        return _hasher.verify(secret_hash or _DUMMY_HASH, secret) and secret_hash is not None
    except (VerificationError, InvalidHashError):
        return False


async def hash_secret(secret: str) -> str:
    """The argon2 hash of `secret`, computed off the event loop."""
    return await asyncio.get_running_loop().run_in_executor(_HASH_THREADS, _hasher.hash, secret)


async def verify_secret(secret_hash: str | None, secret: str) -> bool:
    """Whether `secret` matches; without a hash it checks a dummy one, so an unknown name costs
    the same time as a wrong password. Runs off the event loop."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_HASH_THREADS, _verify, secret_hash, secret)


@dataclass(frozen=True)
class Claims:
    sub: str
    roles: list[str]
    typ: TokenType
    exp: int


def issue(
    settings: Settings,
    *,
    sub: str,
    roles: list[str],
    typ: TokenType,
    ttl_s: int | None = None,
    extra: dict[str, str] | None = None,
) -> tuple[str, int]:
    """A signed token and its lifetime in seconds (the type's own unless `ttl_s`); `extra`
    claims ride along, never replacing the standard ones."""
    ttl = ttl_s or (settings.jwt.user_ttl_s if typ == "user" else settings.jwt.service_ttl_s)
    now = int(time.time())
    payload: dict[str, Any] = {
        **(extra or {}),
        "sub": sub,
        "roles": roles,
        "typ": typ,
        "iat": now,
        "exp": now + ttl,
        "iss": settings.jwt.issuer,
        "aud": settings.jwt.audience,
        "jti": uuid.uuid4().hex,
    }
    return jwt.encode(payload, settings.jwt_key, algorithm="HS256"), ttl


_VERIFIED: Verified[Claims] = Verified()  # common/verified.py


def verify(settings: Settings, token: str, *, expected: TokenType) -> Claims:
    """Decode and check signature, algorithm, expiry, audience, issuer and token type."""
    key = (settings.jwt_key.encode(), token, expected)
    try:
        claims = _VERIFIED.get(key)
    except Expired as exc:
        raise Unauthorized("Token has expired", code=Code.TOKEN_EXPIRED) from exc
    if claims is None:
        claims = _decode(settings, token, expected=expected)
        _VERIFIED.put(key, claims, claims.exp)
    return claims


def _decode(settings: Settings, token: str, *, expected: TokenType) -> Claims:
    try:
        payload = jwt.decode(
            token,
            settings.jwt_key,
            algorithms=["HS256"],
            audience=settings.jwt.audience,
            issuer=settings.jwt.issuer,
            options={"require": ["sub", "typ", "exp", "iat", "iss", "aud"]},
        )
    except jwt.ExpiredSignatureError as exc:
        raise Unauthorized("Token has expired", code=Code.TOKEN_EXPIRED) from exc
    except jwt.PyJWTError as exc:
        raise Unauthorized("Invalid token") from exc
    if payload.get("typ") != expected:
        raise Unauthorized(f"Expected a {expected} token")
    sub, roles = payload.get("sub"), payload.get("roles", [])
    if not isinstance(sub, str) or not sub or not isinstance(roles, list):
        raise Unauthorized("Invalid token")
    return Claims(sub=sub, roles=[str(r) for r in roles], typ=expected, exp=int(payload["exp"]))
