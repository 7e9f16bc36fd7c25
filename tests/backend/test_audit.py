"""Every core write leaves an audit row; admins search the trail by actor, action, resource
and time range, page by page."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.backend.support import (
    NewUser,
    Person,
    append,
    assert_error,
    audit_rows,
    create_conversation,
)

AUDIT = "/api/audit"
CONV = "/api/assistant/conversations"


@pytest.fixture()
def person(new_user: NewUser) -> Person:
    """A fresh user, so that filtering by actor sees only this test's rows."""
    return new_user("editor", prefix="audited")


@pytest.fixture(scope="module")
def shared(new_user: NewUser) -> Person:
    return new_user("editor", prefix="audited")


def test_every_conversation_write_route_leaves_one_audit_row_with_the_request_id(api, sql, person):
    def rid(name: str) -> dict[str, str]:
        return {"X-Request-ID": f"{name}-{person.id[:8]}"}

    cid = api.post(CONV, json={}, headers={**person.headers, **rid("conversation.create")}).json()[
        "id"
    ]
    path, lease = f"{CONV}/{cid}", f"/api/agent/conversations/{cid}/lease"
    calls = [
        ("conversation.update", "patch", path, {"json": {"title": "t"}}, person.headers),
        (
            "conversation.message_append",
            "post",
            path + "/messages",
            {"json": {"role": "user", "content": "hello"}},
            person.agent,
        ),
        ("conversation.lease_acquire", "put", lease, {"json": {"holder": "r1"}}, person.agent),
        ("conversation.lease_release", "delete", lease, {"params": {"holder": "r1"}}, person.agent),
        ("conversation.archive", "delete", path, {}, person.headers),
        ("conversation.restore", "post", path + "/restore", {}, person.headers),
    ]
    for action, method, url, kwargs, headers in calls:
        response = api.request(method, url, headers={**headers, **rid(action)}, **kwargs)
        assert response.is_success, (action, response.text)
    rows = audit_rows(sql, resource_id=cid)
    expected = ["conversation.create"] + [c[0] for c in calls]
    assert [r["action"] for r in rows] == expected
    for row in rows:
        assert str(row["actor_user_id"]) == person.id and row["outcome"] == "success"
        assert row["resource_type"] == "conversation"
        assert row["request_id"] == rid(row["action"])["X-Request-ID"]
    by_action = {r["action"]: r for r in rows}
    assert by_action["conversation.message_append"]["service_client_id"] == "agent-chat"
    assert by_action["conversation.update"]["service_client_id"] is None
    assert by_action["conversation.message_append"]["details"]["role"] == "user"


def test_a_refused_write_leaves_no_audit_row(api, sql, shared):
    cid = create_conversation(api, shared.headers)["id"]
    api.delete(f"{CONV}/{cid}", headers=shared.headers)
    late = api.post(
        f"{CONV}/{cid}/messages", json={"role": "user", "content": "x"}, headers=shared.agent
    )
    assert late.status_code == 409
    assert not audit_rows(sql, resource_id=cid, action="conversation.message_append")


def _search(api, headers, **params) -> dict:
    response = api.get(AUDIT, params=params, headers=headers)
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_admins_filter_the_trail_by_actor_name_or_id_action_and_resource(api, as_user, person):
    first = create_conversation(api, person.headers)["id"]
    second = create_conversation(api, person.headers)["id"]
    append(api, person.agent, second, "hi")
    admin = as_user["admin"]

    by_name = _search(api, admin, actor=person.username)
    by_id = _search(api, admin, actor=person.id)
    assert by_name == by_id
    actions = [r["action"] for r in by_name["items"]]
    # Newest first: the fixture's user.create (actor admin) is not theirs; their login is.
    assert actions == [
        "conversation.message_append",
        "conversation.create",
        "conversation.create",
        "auth.login",
    ]
    assert by_name["total"] == 4
    creates = _search(api, admin, actor=person.username, action="conversation.create")
    assert [r["resource_id"] for r in creates["items"]] == [second, first]
    one = _search(api, admin, resource_type="conversation", resource_id=first)
    assert [(r["action"], r["resource_id"]) for r in one["items"]] == [
        ("conversation.create", first)
    ]
    assert _search(api, admin, actor="nobody-at-all") == {"items": [], "total": 0}


def test_the_trail_pages_newest_first_with_a_stable_total(api, as_user, person):
    for _ in range(5):
        create_conversation(api, person.headers)
    admin = as_user["admin"]
    full = _search(api, admin, actor=person.username, limit=100)["items"]
    pages = [_search(api, admin, actor=person.username, limit=2, offset=o) for o in (0, 2, 4)]
    assert [r["id"] for p in pages for r in p["items"]] == [r["id"] for r in full]
    assert {p["total"] for p in pages} == {6}
    assert [r["id"] for r in full] == sorted((r["id"] for r in full), reverse=True)


def test_the_trail_filters_by_time_range(api, sql, as_user, shared):
    cid = create_conversation(api, shared.headers)["id"]
    [row] = audit_rows(sql, resource_id=cid)
    at: datetime = row["created_at"]
    admin = as_user["admin"]
    inside = _search(
        api,
        admin,
        resource_id=cid,
        since=at.isoformat(),
        until=(at + timedelta(seconds=1)).isoformat(),
    )
    assert inside["total"] == 1
    later = _search(api, admin, resource_id=cid, since=(at + timedelta(microseconds=1)).isoformat())
    assert later["total"] == 0
    # `until` is exclusive.
    assert _search(api, admin, resource_id=cid, until=at.isoformat())["total"] == 0
    naive_utc = at.astimezone(UTC).replace(tzinfo=None) - timedelta(seconds=1)
    assert _search(api, admin, resource_id=cid, since=naive_utc.isoformat())["total"] == 1


@pytest.mark.parametrize(
    "params",
    [
        {"since": "yesterday"},
        {"until": "2026-13-01"},
        {"limit": 0},
        {"offset": -1},
        {"actor": "a" * 65},
    ],
)
def test_bad_audit_filters_are_422(api, as_user, params):
    assert_error(api.get(AUDIT, params=params, headers=as_user["admin"]), 422, "INVALID_INPUT")


def test_a_huge_audit_limit_is_capped_at_the_server_maximum(api, sql, as_user):
    sql.execute(
        "INSERT INTO assistant_audit (created_at, action, outcome, details)"
        " SELECT now(), 'test.bulk', 'success', '{}' FROM generate_series(1, 201)"
    )
    page = _search(api, as_user["admin"], action="test.bulk", limit=10**9)
    assert (len(page["items"]), page["total"]) == (200, 201)
