"""The forged-token corpus and dual identity, over real HTTP."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from typing import Any

import jwt
import pytest

from tests.backend.support import (
    NewUser,
    assert_error,
    audit_rows,
    bearer,
    create_conversation,
    scalar,
)
from tests.conftest import TEST_JWT_SECRET

ME = "/api/auth/me"


def _b64(data: dict[str, Any]) -> str:
    raw = json.dumps(data, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _hs512(payload: dict[str, Any]) -> str:
    """Signed with the right secret but an algorithm the backend does not allow."""
    signing_input = _b64({"alg": "HS512", "typ": "JWT"}) + "." + _b64(payload)
    mac = hmac.new(TEST_JWT_SECRET.encode(), signing_input.encode(), hashlib.sha512).digest()
    return signing_input + "." + base64.urlsafe_b64encode(mac).rstrip(b"=").decode()


def _payload(token: str) -> dict[str, Any]:
    return dict(jwt.decode(token, options={"verify_signature": False}))


def claims(subject: str, **overrides: Any) -> dict[str, Any]:
    """Valid user-token claims for `subject`; an override of None drops that claim."""
    now = int(time.time())
    base = {
        "sub": subject,
        "roles": ["viewer"],
        "typ": "user",
        "iat": now,
        "exp": now + 600,
        "iss": "agent-chat",
        "aud": "agent-chat",
    }
    base.update(overrides)
    return {k: v for k, v in base.items() if v is not None}


def forge(payload: dict[str, Any], secret: str = TEST_JWT_SECRET) -> str:
    return jwt.encode(payload, secret, algorithm="HS256")


@pytest.fixture(scope="module")
def viewer_id(api, as_user) -> str:
    return str(api.get(ME, headers=as_user["viewer"]).json()["id"])


def test_a_correctly_forged_user_token_is_accepted_so_the_corpus_below_tests_one_flaw_each(
    api, viewer_id
):
    response = api.get(ME, headers=bearer(forge(claims(viewer_id))))
    assert response.status_code == 200, response.text
    assert response.json()["username"] == "viewer"


def _corpus(sub: str, real_token: str) -> dict[str, str]:
    tampered = real_token.split(".")
    payload = _payload(real_token) | {"roles": ["admin"]}
    tampered[1] = _b64(payload)
    return {
        "alg_none": _b64({"alg": "none", "typ": "JWT"}) + "." + _b64(claims(sub)) + ".",
        "alg_none_with_signature": _b64({"alg": "none"}) + "." + _b64(claims(sub)) + ".c2ln",
        "wrong_secret": forge(claims(sub), secret="another-secret-of-enough-length-0123456789"),
        "expired": forge(claims(sub, iat=int(time.time()) - 7200, exp=int(time.time()) - 3600)),
        "wrong_audience": forge(claims(sub, aud="someone-else")),
        "wrong_issuer": forge(claims(sub, iss="evil")),
        "service_typ_as_user": forge(claims("agent-chat", typ="service", roles=["service"])),
        "missing_typ": forge(claims(sub, typ=None)),
        "missing_sub": forge(claims(sub, sub=None)),
        "missing_exp": forge(claims(sub, exp=None)),
        "sub_not_a_uuid": forge(claims("admin")),
        "sub_of_nobody": forge(claims("00000000-0000-4000-8000-000000000000")),
        "tampered_roles": ".".join(tampered),
        "garbage": "not-a-jwt-at-all",
        "hs512_with_right_secret": _hs512(claims(sub)),
    }


CORPUS = [
    "alg_none",
    "alg_none_with_signature",
    "wrong_secret",
    "expired",
    "wrong_audience",
    "wrong_issuer",
    "service_typ_as_user",
    "missing_typ",
    "missing_sub",
    "missing_exp",
    "sub_not_a_uuid",
    "sub_of_nobody",
    "tampered_roles",
    "garbage",
    "hs512_with_right_secret",
]


@pytest.mark.parametrize("case", CORPUS)
def test_forged_user_tokens_are_refused_with_401(api, tokens, viewer_id, case):
    token = _corpus(viewer_id, tokens["viewer"])[case]
    for path in (ME, "/api/assistant/conversations", "/api/audit"):
        response = api.get(path, headers=bearer(token))
        error = assert_error(
            response, 401, "TOKEN_EXPIRED" if case == "expired" else "UNAUTHORIZED"
        )
        assert response.headers["WWW-Authenticate"] == "Bearer"
        assert "Traceback" not in error["message"]


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": ""}, {"Authorization": "Bearer"}, {"Authorization": "Basic YTpi"}],
    ids=["no_header", "empty_header", "empty_bearer", "basic_scheme"],
)
def test_a_missing_or_non_bearer_authorization_is_401(api, headers):
    assert_error(api.get(ME, headers=headers), 401, "UNAUTHORIZED")


def test_a_signed_token_claiming_admin_for_a_viewer_is_judged_on_the_database_roles(api, viewer_id):
    token = forge(claims(viewer_id, roles=["admin"]))
    assert api.get(ME, headers=bearer(token)).json()["roles"] == ["viewer"]
    assert_error(api.get("/api/audit", headers=bearer(token)), 403, "FORBIDDEN")


def test_a_token_accepted_once_is_refused_as_expired_once_its_time_is_up(
    api, viewer_id, service_token
):
    """Verified tokens are remembered (the agent sends the same two all turn long): the
    expiry is checked again on every use."""
    token = forge(claims(viewer_id, exp=int(time.time()) + 2))
    dual = {**bearer(service_token), "X-On-Behalf-Of": token}
    assert api.get(ME, headers=bearer(token)).status_code == 200
    assert api.get(ME, headers=dual).status_code == 200
    time.sleep(max(0.0, _payload(token)["exp"] - time.time()) + 0.1)
    assert_error(api.get(ME, headers=bearer(token)), 401, "TOKEN_EXPIRED")
    assert_error(api.get(ME, headers=dual), 401, "TOKEN_EXPIRED")


def test_a_user_deleted_after_login_can_no_longer_use_the_token(api, sql, new_user: NewUser):
    person = new_user("editor")
    assert api.get(ME, headers=person.headers).status_code == 200
    sql.execute("DELETE FROM users WHERE id = %s", (person.id,))
    assert_error(api.get(ME, headers=person.headers), 401, "UNAUTHORIZED")
    assert_error(api.get(ME, headers=person.agent), 401, "UNAUTHORIZED")


def test_a_deactivated_user_can_neither_use_its_token_nor_log_in(api, sql, new_user: NewUser):
    person = new_user()
    sql.execute("UPDATE users SET is_active = false WHERE id = %s", (person.id,))
    assert_error(api.get(ME, headers=person.headers), 401, "UNAUTHORIZED")
    login = api.post(
        "/api/auth/login", json={"username": person.username, "password": person.password}
    )
    assert_error(login, 401, "INVALID_CREDENTIALS")


def test_tokens_issued_by_login_carry_the_contract_claims(api, tokens, service_token):
    user = _payload(tokens["editor"])
    assert jwt.get_unverified_header(tokens["editor"])["alg"] == "HS256"
    assert {"sub", "roles", "typ", "iat", "exp", "iss", "aud"} <= set(user)
    assert (user["typ"], user["roles"], user["aud"]) == ("user", ["editor"], "agent-chat")
    service = _payload(service_token)
    assert (service["typ"], service["sub"]) == ("service", "agent-chat")
    assert service["exp"] - service["iat"] <= 300 < user["exp"] - user["iat"]


# --- dual identity -------------------------------------------------------------------------


def test_the_agent_acting_for_a_user_sees_that_user(api, as_agent):
    me = api.get(ME, headers=as_agent["editor"]).json()
    assert (me["username"], me["roles"]) == ("editor", ["editor"])


def test_a_dual_identity_write_audits_both_the_user_and_the_service_client(
    api, sql, new_user: NewUser
):
    person = new_user()
    conversation = create_conversation(api, person.agent, "via the agent")
    [row] = audit_rows(sql, action="conversation.create", resource_id=conversation["id"])
    assert str(row["actor_user_id"]) == person.id
    assert row["actor_username"] == person.username
    assert row["service_client_id"] == "agent-chat"


def test_a_user_write_audits_no_service_client(api, sql, new_user: NewUser):
    person = new_user()
    conversation = create_conversation(api, person.headers, "by hand")
    [row] = audit_rows(sql, action="conversation.create", resource_id=conversation["id"])
    assert str(row["actor_user_id"]) == person.id and row["service_client_id"] is None


def test_a_service_token_without_on_behalf_of_is_refused_on_user_resources(api, service_token):
    for path in (ME, "/api/assistant/conversations"):
        assert_error(api.get(path, headers=bearer(service_token)), 401, "UNAUTHORIZED")


def test_a_user_token_as_the_service_bearer_is_refused(api, tokens):
    headers = {**bearer(tokens["admin"]), "X-On-Behalf-Of": tokens["viewer"]}
    assert_error(api.get(ME, headers=headers), 401, "UNAUTHORIZED")


def test_a_service_token_as_the_on_behalf_of_user_is_refused(api, service_token):
    headers = {**bearer(service_token), "X-On-Behalf-Of": service_token}
    assert_error(api.get(ME, headers=headers), 401, "UNAUTHORIZED")


@pytest.mark.parametrize("case", ["expired", "wrong_secret", "tampered_roles", "alg_none"])
def test_a_forged_on_behalf_of_token_is_refused(api, tokens, service_token, viewer_id, case):
    forged = _corpus(viewer_id, tokens["viewer"])[case]
    headers = {**bearer(service_token), "X-On-Behalf-Of": forged}
    response = api.get(ME, headers=headers)
    error = assert_error(response, 401, "TOKEN_EXPIRED" if case == "expired" else "UNAUTHORIZED")
    assert "credential" not in error["details"]  # the user's token failed, not the agent's


def test_a_forged_service_token_is_refused_even_with_a_valid_user(api, tokens):
    fake_service = forge(claims("agent-chat", typ="service"), secret="x" * 40)
    headers = {**bearer(fake_service), "X-On-Behalf-Of": tokens["viewer"]}
    error = assert_error(api.get(ME, headers=headers), 401, "UNAUTHORIZED")
    assert error["details"] == {"credential": "service"}


def test_a_service_token_for_an_unknown_client_is_refused(api, tokens):
    ghost = forge(claims("ghost-client", typ="service", roles=["service"]))
    headers = {**bearer(ghost), "X-On-Behalf-Of": tokens["viewer"]}
    error = assert_error(api.get(ME, headers=headers), 401, "UNAUTHORIZED")
    assert error["details"] == {"credential": "service"}


def test_rbac_is_decided_on_the_user_behind_the_agent(api, sql, as_agent):
    before = scalar(sql, "SELECT count(*) FROM users")
    body = {"username": "made_by_viewer", "password": "long-enough-pw", "roles": ["admin"]}
    response = api.post("/api/admin/users", json=body, headers=as_agent["viewer"])
    assert_error(response, 403, "FORBIDDEN")
    assert scalar(sql, "SELECT count(*) FROM users") == before
    assert api.get("/api/audit?limit=1", headers=as_agent["admin"]).status_code == 200


def test_service_token_endpoint_rejects_a_wrong_secret_and_audits_it(api, sql):
    response = api.post(
        "/api/auth/service-token", json={"client_id": "agent-chat", "client_secret": "nope"}
    )
    assert_error(response, 401, "INVALID_CREDENTIALS")
    rows = audit_rows(sql, action="auth.service_token", outcome="failure")
    assert rows and rows[-1]["resource_id"] == "agent-chat"
