"""The agent's user-JWT check remembers tokens it verified, without weakening the check: a
remembered token still expires on time, and a token is only ever good under its own secret."""

from __future__ import annotations

import time
from typing import Any

import jwt
import pytest
from pydantic import SecretStr

from agent import auth
from agent.auth import AuthError, verify_user
from agent.config import Settings
from agent.errors import Code
from common import verified

SECRET = "unit-test-secret-" + "x" * 32


def _settings(secret: str = SECRET) -> Settings:
    return Settings(jwt_secret=SecretStr(secret))


def _token(settings: Settings, *, ttl_s: float, **claims: Any) -> str:
    now = int(time.time())
    payload = {
        "sub": "user-1",
        "roles": ["viewer"],
        "typ": "user",
        "iat": now,
        "exp": now + ttl_s,
        "iss": settings.jwt.issuer,
        "aud": settings.jwt.audience,
        **claims,
    }
    return jwt.encode(payload, SECRET, algorithm="HS256")


@pytest.fixture(autouse=True)
def _forget() -> None:
    auth._VERIFIED.clear()


def test_a_token_accepted_once_is_refused_as_expired_once_its_time_is_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = _settings()
    token = _token(settings, ttl_s=60)
    assert verify_user(settings, token).user_id == "user-1"
    assert verify_user(settings, token).roles == ("viewer",)  # remembered
    later = time.time() + 61
    monkeypatch.setattr(verified.time, "time", lambda: later)
    with pytest.raises(AuthError) as refused:
        verify_user(settings, token)
    assert refused.value.code == Code.TOKEN_EXPIRED


def test_a_remembered_token_is_checked_again_under_another_secret() -> None:
    token = _token(_settings(), ttl_s=60)
    assert verify_user(_settings(), token).user_id == "user-1"
    with pytest.raises(AuthError) as refused:
        verify_user(_settings("another-secret-" + "y" * 32), token)
    assert refused.value.code == Code.UNAUTHORIZED


def test_a_refused_token_is_not_remembered() -> None:
    settings = _settings()
    service = _token(settings, ttl_s=60, typ="service")
    for _ in range(2):  # refused again: nothing was remembered for it
        with pytest.raises(AuthError, match="A user token is required"):
            verify_user(settings, service)
