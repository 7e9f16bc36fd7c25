"""A firing's credential is the backend's own user token (backend/identity/tokens.py): the
backend accepts it as its owner's, it names the firing, and it lives only as long as the run."""

from __future__ import annotations

import time
import uuid

import jwt
import pytest

from backend.config import Settings
from backend.errors import Unauthorized
from backend.identity import tokens
from backend.schedules import credential


def test_a_firing_credential_is_a_user_token_of_the_owner_bounded_by_the_run(monkeypatch):
    monkeypatch.setenv("SCHEDULES__RUN_DEADLINE_S", "90")
    settings = Settings()
    owner, run = uuid.uuid4(), uuid.uuid4()
    token = credential.issue(settings, owner_id=owner, roles=["editor"], run_id=run)

    claims = tokens.verify(settings, token, expected="user")
    assert (claims.sub, claims.roles) == (str(owner), ["editor"])
    assert abs(claims.exp - (int(time.time()) + 90)) <= 2  # the run's deadline, not a day
    raw = jwt.decode(token, options={"verify_signature": False})
    assert raw["fir"] == str(run) and raw["iss"] == settings.jwt.issuer
    with pytest.raises(Unauthorized):  # not a service token
        tokens.verify(settings, token, expected="service")
