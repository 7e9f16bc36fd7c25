"""Login, service tokens and user administration: bodies, duplicates, and their audit rows."""

from __future__ import annotations

import uuid

import pytest

from tests.backend.support import NewUser, assert_error, audit_rows, scalar
from tests.conftest import AGENT_CLIENT_SECRET, PASSWORDS

LOGIN = "/api/auth/login"
USERS = "/api/admin/users"


def test_login_returns_the_contract_body(api):
    response = api.post(LOGIN, json={"username": "editor", "password": PASSWORDS["editor"]})
    body = response.json()
    assert set(body) == {"access_token", "token_type", "expires_in", "user"}
    assert (body["token_type"], body["expires_in"]) == ("bearer", 3600)
    assert set(body["user"]) == {"id", "username", "roles"}
    assert (body["user"]["username"], body["user"]["roles"]) == ("editor", ["editor"])


def test_unknown_user_and_wrong_password_get_byte_identical_401s_and_are_both_audited(
    api, sql, new_user: NewUser
):
    person = new_user()
    ghost = f"ghost_{uuid.uuid4().hex[:8]}"
    unknown = api.post(LOGIN, json={"username": ghost, "password": "whatever-pass"})
    wrong = api.post(LOGIN, json={"username": person.username, "password": "wrong-password"})
    assert_error(unknown, 401, "INVALID_CREDENTIALS")
    assert unknown.content == wrong.content
    assert unknown.headers["WWW-Authenticate"] == wrong.headers["WWW-Authenticate"] == "Bearer"

    [ghost_row] = audit_rows(sql, action="auth.login", actor_username=ghost)
    assert (ghost_row["outcome"], ghost_row["actor_user_id"]) == ("failure", None)
    assert ghost_row["request_id"] == unknown.headers["X-Request-ID"]
    failures = audit_rows(
        sql, action="auth.login", actor_username=person.username, outcome="failure"
    )
    assert [str(r["resource_id"]) for r in failures] == [person.id]
    assert "wrong-password" not in str(failures[0]["details"])


def test_a_successful_login_is_audited_with_the_user(api, sql, new_user: NewUser):
    person = new_user("editor")  # the fixture logs the new user in once
    [row] = audit_rows(sql, action="auth.login", actor_user_id=person.id)
    assert (row["outcome"], row["actor_username"], row["resource_id"]) == (
        "success",
        person.username,
        person.id,
    )


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"username": "admin"},
        {"password": "x"},
        {"username": 5, "password": "x"},
        {"username": "admin", "password": ["x"]},
        {"username": "", "password": "x"},
        {"username": "a" * 65, "password": "x"},
        "just a string",
    ],
)
def test_a_malformed_login_body_is_422_in_the_envelope(api, body):
    error = assert_error(api.post(LOGIN, json=body), 422, "INVALID_INPUT")
    assert error["details"]["errors"]


def test_a_login_body_that_is_not_json_is_422(api):
    response = api.post(LOGIN, content=b"username=admin", headers={"Content-Type": "text/plain"})
    assert_error(response, 422, "INVALID_INPUT")


def test_service_token_exchange_works_and_is_audited(api, sql):
    body = {"client_id": "agent-chat", "client_secret": AGENT_CLIENT_SECRET}
    response = api.post("/api/auth/service-token", json=body)
    assert response.status_code == 200
    assert response.json()["token_type"] == "bearer" and response.json()["expires_in"] == 300
    rows = audit_rows(sql, action="auth.service_token", request_id=response.headers["X-Request-ID"])
    assert [(r["outcome"], r["resource_id"]) for r in rows] == [("success", "agent-chat")]


def test_an_admin_creates_a_user_who_can_log_in_with_a_hashed_password(api, sql, as_user):
    username = f"made_{uuid.uuid4().hex[:8]}"
    body = {"username": username, "password": "a-good-password", "roles": ["editor", "viewer"]}
    created = api.post(USERS, json=body, headers=as_user["admin"])
    assert created.status_code == 201
    assert created.json()["roles"] == ["editor", "viewer"]
    stored = scalar(sql, "SELECT password_hash FROM users WHERE username = %s", username)
    assert stored.startswith("$argon2") and "a-good-password" not in stored
    login = api.post(LOGIN, json={"username": username, "password": "a-good-password"})
    assert login.status_code == 200 and login.json()["user"]["id"] == created.json()["id"]
    [row] = audit_rows(sql, action="user.create", resource_id=created.json()["id"])
    assert row["actor_username"] == "admin" and row["details"]["username"] == username


def test_a_duplicate_username_is_409_and_nothing_else_is_written(api, sql, as_user):
    body = {"username": "editor", "password": "another-password", "roles": ["admin"]}
    before = len(audit_rows(sql, action="user.create"))
    response = api.post(USERS, json=body, headers=as_user["admin"])
    assert_error(response, 409, "USERNAME_TAKEN")
    assert scalar(sql, "SELECT count(*) FROM users WHERE username = 'editor'") == 1
    assert scalar(sql, "SELECT roles FROM users WHERE username = 'editor'") == ["editor"]
    assert len(audit_rows(sql, action="user.create")) == before


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"password": "long-enough", "roles": ["viewer"]},
        {"username": "{name}", "roles": ["viewer"]},
        {"username": "{name}", "password": "long-enough"},
        {"username": "{name}", "password": "long-enough", "roles": []},
        {"username": "{name}", "password": "long-enough", "roles": ["superuser"]},
        {"username": "{name}", "password": "long-enough", "roles": "admin"},
        {"username": "{name}", "password": "short", "roles": ["viewer"]},
        {"username": "{name}", "password": 12345678, "roles": ["viewer"]},
        {"username": "has space", "password": "long-enough", "roles": ["viewer"]},
        {"username": "x" * 65, "password": "long-enough", "roles": ["viewer"]},
    ],
)
def test_a_bad_user_body_is_422_and_writes_no_user(api, sql, as_user, body):
    name = f"bad_{uuid.uuid4().hex[:8]}"
    body = {k: (v.format(name=name) if isinstance(v, str) else v) for k, v in body.items()}
    before = scalar(sql, "SELECT count(*) FROM users")
    error = assert_error(api.post(USERS, json=body, headers=as_user["admin"]), 422, "INVALID_INPUT")
    assert error["details"]["errors"]
    assert scalar(sql, "SELECT count(*) FROM users") == before
