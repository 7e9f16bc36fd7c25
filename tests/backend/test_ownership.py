"""Someone else's conversation is 404 on every route, and nothing about it changes;
a malformed id is 422."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.backend.support import (
    NewUser,
    Person,
    append,
    assert_error,
    audit_rows,
    checkpoint_rows,
    create_conversation,
    put_checkpoint,
)

CONV = "/api/assistant/conversations/{id}"
AGENT = "/api/agent/conversations/{id}"

# (name, method, path template, request kwargs, caller: "user" | "agent")
ROUTES: list[tuple[str, str, str, dict[str, Any], str]] = [
    ("get", "GET", CONV, {}, "user"),
    ("patch", "PATCH", CONV, {"json": {"title": "stolen"}}, "user"),
    ("history", "GET", CONV + "/history", {}, "user"),
    ("archive", "DELETE", CONV, {}, "user"),
    ("restore", "POST", CONV + "/restore", {}, "user"),
    ("append", "POST", CONV + "/messages", {"json": {"role": "user", "content": "x"}}, "agent"),
    ("active", "GET", AGENT + "/active", {}, "user"),
    ("lease_get", "GET", AGENT + "/lease", {}, "agent"),
    ("lease_put", "PUT", AGENT + "/lease", {"json": {"holder": "victim-run"}}, "agent"),
    ("lease_delete", "DELETE", AGENT + "/lease", {"params": {"holder": "victim-run"}}, "agent"),
]
IDS = [r[0] for r in ROUTES]


def _snapshot(sql, cid: str) -> tuple[Any, ...]:
    conversation = sql.execute(
        "SELECT title, message_count, is_archived, updated_at FROM agent_conversations"
        " WHERE id = %s",
        (cid,),
    ).fetchone()
    messages = sql.execute(
        "SELECT id, content FROM agent_messages WHERE conversation_id = %s ORDER BY id", (cid,)
    ).fetchall()
    runs = sql.execute(
        "SELECT holder, expires_at FROM agent_runs WHERE conversation_id = %s", (cid,)
    ).fetchall()
    return conversation, tuple(messages), tuple(runs), checkpoint_rows(sql, cid)


@pytest.fixture(scope="module")
def intruder(new_user: NewUser) -> Person:
    return new_user("admin", prefix="intruder")


@pytest.fixture(scope="module")
def victim_conversation(api, new_user: NewUser, checkpointer) -> str:
    """An admin's conversation with a message, a live run lease and a checkpoint."""
    victim = new_user("admin", prefix="victim")
    cid = create_conversation(api, victim.headers, "private")["id"]
    append(api, victim.agent, cid, "secret question")
    lease = api.put(
        AGENT.format(id=cid) + "/lease",
        json={"holder": "victim-run", "ttl_s": 120},
        headers=victim.agent,
    )
    assert lease.status_code == 200
    put_checkpoint(checkpointer, cid)
    return cid


@pytest.mark.parametrize(("name", "method", "path", "kwargs", "caller"), ROUTES, ids=IDS)
def test_another_users_conversation_is_404_and_left_untouched(
    api, sql, intruder, victim_conversation, name, method, path, kwargs, caller
):
    headers = intruder.headers if caller == "user" else intruder.agent
    before = _snapshot(sql, victim_conversation)
    response = api.request(method, path.format(id=victim_conversation), headers=headers, **kwargs)
    error = assert_error(response, 404, "NOT_FOUND")
    assert victim_conversation not in response.text
    assert _snapshot(sql, victim_conversation) == before
    assert not audit_rows(sql, actor_user_id=intruder.id, resource_id=victim_conversation)
    # The answer is the same as for an id that does not exist at all.
    unknown = api.request(method, path.format(id=uuid.uuid4()), headers=headers, **kwargs)
    assert assert_error(unknown, 404, "NOT_FOUND") == error


@pytest.mark.parametrize(("name", "method", "path", "kwargs", "caller"), ROUTES, ids=IDS)
@pytest.mark.parametrize("bad_id", ["not-a-uuid", "1234", "00000000-0000-0000-0000-00000000000g"])
def test_a_malformed_conversation_id_is_422(
    api, as_user, as_agent, name, method, path, kwargs, caller, bad_id
):
    headers = (as_user if caller == "user" else as_agent)["viewer"]
    response = api.request(method, path.format(id=bad_id), headers=headers, **kwargs)
    error = assert_error(response, 422, "INVALID_INPUT")
    assert any(e["loc"] == ["path", "conversation_id"] for e in error["details"]["errors"])


def test_another_users_conversations_never_appear_in_my_lists(api, new_user: NewUser):
    owner, other = new_user(), new_user()
    cid = create_conversation(api, owner.headers, "owner only")["id"]
    api.delete(CONV.format(id=cid), headers=owner.headers)
    for archived in ("false", "true"):
        page = api.get(
            "/api/assistant/conversations", params={"archived": archived}, headers=other.headers
        ).json()
        assert page == {"items": [], "total": 0}
