"""Personal access tokens over raw HTTP: create, list, revoke; acting as their user; scopes;
one 401 for revoked, expired, unknown and forged tokens; secrets nowhere but the first answer."""

from __future__ import annotations

import hashlib
import json
import uuid

import pytest

from tests.backend.support import assert_error, audit_rows, scalar
from tests.conftest import bearer


def _create(api, headers, **body):
    response = api.post("/api/auth/tokens", json={"name": "script", **body}, headers=headers)
    assert response.status_code == 201, response.text
    return response.json()


def test_a_token_is_shown_once_stored_as_a_hash_and_acts_as_its_user(api, sql, new_user):
    person = new_user("editor")
    created = _create(api, person.headers)
    token = created["token"]
    assert token.startswith("acp_") and len(token) > 40
    assert created["scope"] == "full" and created["prefix"] == token[:12]
    assert set(created) == {"id", "name", "scope", "prefix", "token", "created_at", "expires_at"}
    stored = sql.execute(
        "SELECT token_hash, expires_at - created_at FROM personal_access_tokens WHERE id = %s",
        (created["id"],),
    ).fetchone()
    assert stored[0] == hashlib.sha256(token.encode()).hexdigest()
    assert stored[1].days == 90  # the default expiry
    table = json.dumps(sql.execute("SELECT * FROM personal_access_tokens").fetchall(), default=str)
    assert token not in table

    me = api.get("/api/auth/me", headers=bearer(token))
    assert me.status_code == 200, me.text
    assert me.json()["username"] == person.username and me.json()["roles"] == ["editor"]

    listed = api.get("/api/auth/tokens", headers=person.headers).json()["items"]
    assert [item["id"] for item in listed] == [created["id"]]
    assert token not in json.dumps(listed) and listed[0]["last_used_at"] is not None
    assert set(listed[0]) == {
        "id", "name", "scope", "prefix", "created_at", "expires_at", "last_used_at"
    }  # fmt: skip


def test_creation_and_revocation_are_audited_without_the_secret(api, sql, new_user):
    person = new_user("viewer")
    created = _create(api, person.headers, scope="read", expires_in_days=7)
    revoked = api.delete(f"/api/auth/tokens/{created['id']}", headers=person.headers)
    assert revoked.status_code == 204, revoked.text
    rows = audit_rows(sql, resource_type="access_token", resource_id=created["id"])
    assert [row["action"] for row in rows] == ["access_token.create", "access_token.revoke"]
    assert all(str(row["actor_user_id"]) == person.id for row in rows)
    assert rows[0]["details"]["scope"] == "read"
    assert created["token"] not in json.dumps([dict(r) for r in rows], default=str)
    assert created["token"][4:] not in json.dumps([dict(r) for r in rows], default=str)


def test_revoked_expired_unknown_and_forged_tokens_get_one_401(api, sql, new_user):
    person = new_user("viewer")
    revoked = _create(api, person.headers)
    assert api.delete(f"/api/auth/tokens/{revoked['id']}", headers=person.headers).status_code
    expired = _create(api, person.headers, expires_in_days=1)
    sql.execute(
        "UPDATE personal_access_tokens SET expires_at = now() - interval '1 second' WHERE id = %s",
        (expired["id"],),
    )
    sql.commit()
    forged = "acp_" + uuid.uuid4().hex + uuid.uuid4().hex
    messages = set()
    for token in (revoked["token"], expired["token"], forged, revoked["token"] + "x"):
        error = assert_error(api.get("/api/auth/me", headers=bearer(token)), 401, "UNAUTHORIZED")
        messages.add(error["message"])
    assert len(messages) == 1


def test_someone_elses_token_id_is_404_and_stays_alive(api, sql, new_user):
    owner, other = new_user("viewer"), new_user("admin")
    created = _create(api, owner.headers)
    assert_error(
        api.delete(f"/api/auth/tokens/{created['id']}", headers=other.headers), 404, "NOT_FOUND"
    )
    assert_error(
        api.delete(f"/api/auth/tokens/{uuid.uuid4()}", headers=owner.headers), 404, "NOT_FOUND"
    )
    assert api.get("/api/auth/tokens", headers=other.headers).json()["items"] == []
    assert api.get("/api/auth/me", headers=bearer(created["token"])).status_code == 200
    revoked_at = scalar(
        sql, "SELECT revoked_at FROM personal_access_tokens WHERE id = %s", created["id"]
    )
    assert revoked_at is None


def test_a_read_token_has_viewer_rights_and_never_writes(api, new_user):
    admin = new_user("admin")
    read = _create(api, admin.headers, scope="read")["token"]
    full = _create(api, admin.headers)["token"]
    assert api.get("/api/auth/me", headers=bearer(read)).json()["roles"] == ["viewer"]
    assert api.get("/api/dashboards/42", headers=bearer(read)).status_code == 200
    assert_error(api.get("/api/audit", headers=bearer(read)), 403, "FORBIDDEN")
    assert api.get("/api/audit", headers=bearer(full)).status_code == 200
    branch = {"name": f"pat-{uuid.uuid4().hex[:8]}"}
    refused = api.post("/api/dashboards/42/branches", json=branch, headers=bearer(read))
    assert_error(refused, 403, "FORBIDDEN")
    # Nor can it mint itself a wider token.
    minted = api.post("/api/auth/tokens", json={"name": "wider"}, headers=bearer(read))
    assert_error(minted, 403, "FORBIDDEN")


def test_a_token_acts_with_its_users_current_roles(api, sql, new_user):
    person = new_user("admin")
    token = _create(api, person.headers)["token"]
    assert api.get("/api/audit", headers=bearer(token)).status_code == 200
    sql.execute("UPDATE users SET roles = '{viewer}' WHERE id = %s", (person.id,))
    sql.commit()
    assert_error(api.get("/api/audit", headers=bearer(token)), 403, "FORBIDDEN")
    sql.execute("UPDATE users SET is_active = false WHERE id = %s", (person.id,))
    sql.commit()
    assert_error(api.get("/api/auth/me", headers=bearer(token)), 401, "UNAUTHORIZED")


def test_the_agent_may_act_on_behalf_of_a_token(api, new_user, service_token):
    person = new_user("editor")
    token = _create(api, person.headers, scope="read")["token"]
    headers = {**bearer(service_token), "X-On-Behalf-Of": token}
    me = api.get("/api/auth/me", headers=headers)
    assert me.status_code == 200 and me.json()["roles"] == ["viewer"], me.text
    branch = {"name": f"pat-{uuid.uuid4().hex[:8]}"}
    refused = api.post("/api/dashboards/42/branches", json=branch, headers=headers)
    assert_error(refused, 403, "FORBIDDEN")
    forged = {**bearer(service_token), "X-On-Behalf-Of": "acp_" + uuid.uuid4().hex}
    assert_error(api.get("/api/auth/me", headers=forged), 401, "UNAUTHORIZED")


@pytest.mark.parametrize(
    "body",
    [
        {"name": ""},
        {"name": "x", "scope": "admin"},
        {"name": "x", "expires_in_days": 0},
        {"name": "x", "expires_in_days": 366},
        {"name": "x" * 101},
    ],
)
def test_bad_token_requests_are_422(api, as_user, body):
    assert_error(
        api.post("/api/auth/tokens", json=body, headers=as_user["viewer"]), 422, "INVALID_INPUT"
    )
