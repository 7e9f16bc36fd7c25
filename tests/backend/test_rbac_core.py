"""The RBAC matrix of the core routes: role x route x (user JWT | agent on behalf of the user)."""

from __future__ import annotations

import uuid

import pytest

from tests.backend.support import (
    append,
    assert_error,
    audit_rows,
    create_conversation,
    scalar,
)

ROLES = ["admin", "editor", "viewer"]
ADMIN_ONLY = {"admin": True, "editor": False, "viewer": False}
CALLERS = [(role, via) for role in ROLES for via in ("user", "agent")]


def _headers(as_user, as_agent, role: str, via: str) -> dict[str, str]:
    return (as_user if via == "user" else as_agent)[role]


@pytest.mark.parametrize(("role", "via"), CALLERS)
def test_only_admins_create_users(api, sql, as_user, as_agent, role, via):
    username = f"rbac_{role}_{via}_{uuid.uuid4().hex[:6]}"
    body = {"username": username, "password": "long-enough-pw", "roles": ["viewer"]}
    response = api.post(
        "/api/admin/users", json=body, headers=_headers(as_user, as_agent, role, via)
    )
    stored = scalar(sql, "SELECT count(*) FROM users WHERE username = %s", username)
    if ADMIN_ONLY[role]:
        assert response.status_code == 201, response.text
        assert response.json()["username"] == username and response.json()["roles"] == ["viewer"]
        assert stored == 1
    else:
        assert_error(response, 403, "FORBIDDEN")
        assert stored == 0


@pytest.mark.parametrize(("role", "via"), CALLERS)
def test_only_admins_read_the_audit_trail(api, as_user, as_agent, role, via):
    response = api.get("/api/audit", headers=_headers(as_user, as_agent, role, via))
    if ADMIN_ONLY[role]:
        assert response.status_code == 200, response.text
        assert response.json()["total"] >= 1
    else:
        assert_error(response, 403, "FORBIDDEN")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("post", "/api/admin/users"),
        ("get", "/api/audit"),
        ("get", "/api/auth/me"),
        ("get", "/api/assistant/conversations"),
        ("post", "/api/assistant/conversations"),
        # a fixed id: xdist workers must collect the same test ids
        ("get", "/api/agent/conversations/6f1d2c3e-0000-4000-8000-000000000042/active"),
    ],
)
def test_anonymous_callers_get_401_on_every_protected_core_route(api, method, path):
    assert_error(api.request(method, path, json={}), 401, "UNAUTHORIZED")


@pytest.mark.parametrize(("role", "via"), CALLERS)
def test_every_role_manages_its_own_conversations(api, as_user, as_agent, role, via):
    headers = _headers(as_user, as_agent, role, via)
    conversation = create_conversation(api, headers, f"{role} via {via}")
    path = f"/api/assistant/conversations/{conversation['id']}"
    assert api.get(path, headers=headers).status_code == 200
    assert api.patch(path, json={"title": "renamed"}, headers=headers).status_code == 200
    assert api.get(path + "/history", headers=headers).status_code == 200
    active = api.get(f"/api/agent/conversations/{conversation['id']}/active", headers=headers)
    assert active.json() == {"active": False}
    assert api.delete(path, headers=headers).status_code == 204
    assert api.post(path + "/restore", headers=headers).json()["is_archived"] is False


@pytest.mark.parametrize("role", ROLES)
def test_agent_only_routes_refuse_every_plain_user_token(api, sql, as_user, as_agent, role):
    conversation = create_conversation(api, as_user[role])
    cid = conversation["id"]
    message = {"role": "user", "content": "hi", "metadata": {}}
    base = f"/api/agent/conversations/{cid}/lease"
    refused = [
        api.post(
            f"/api/assistant/conversations/{cid}/messages", json=message, headers=as_user[role]
        ),
        api.put(base, json={"holder": "h"}, headers=as_user[role]),
        api.delete(base, params={"holder": "h"}, headers=as_user[role]),
    ]
    for response in refused:
        assert_error(response, 403, "FORBIDDEN")
    assert scalar(sql, "SELECT count(*) FROM agent_messages WHERE conversation_id = %s", cid) == 0
    assert scalar(sql, "SELECT count(*) FROM agent_runs WHERE conversation_id = %s", cid) == 0
    assert not audit_rows(sql, action="conversation.message_append", resource_id=cid)
    # The same calls through the agent on behalf of the same user succeed.
    append(api, as_agent[role], cid, "hi")
    assert api.put(base, json={"holder": "h"}, headers=as_agent[role]).status_code == 200
    assert api.delete(base, params={"holder": "h"}, headers=as_agent[role]).status_code == 204
