"""Usage and budgets over real HTTP: the agent's records counted once per key (a retry after a
dropped connection too), the same sums in a user's page, the conversation and the admin view,
viewers kept to their own usage, budgets set by admins (audited) and carried on the lease."""

from __future__ import annotations

import json
import socket
import time
import uuid
from datetime import UTC, datetime
from urllib.parse import urlsplit

import pytest

from backend.usage.schemas import AdminUsageItem
from tests.backend.support import Person, audit_rows, scalar

WRITE = "/api/agent/usage"
ADMIN = "/api/admin/usage"
CONV = "/api/assistant/conversations"


def call(cid: str | None, key: str, inp: int, out: int, **extra: object) -> dict[str, object]:
    return {
        "key": key,
        "conversation_id": cid,
        "run_id": "r1",
        "mode": "dynamic",
        "model": "fake-model",
        "input_tokens": inp,
        "output_tokens": out,
        "source": "reported",
        **extra,
    }


def totals(body: dict[str, object]) -> tuple[int, int, int, int]:
    return (
        int(body["input_tokens"]),  # type: ignore[call-overload]
        int(body["output_tokens"]),  # type: ignore[call-overload]
        int(body["total_tokens"]),  # type: ignore[call-overload]
        int(body["model_calls"]),  # type: ignore[call-overload]
    )


@pytest.fixture()
def person(new_user) -> Person:
    return new_user("viewer", prefix="usage")


def conversation(api, person: Person) -> str:
    created = api.post(CONV, json={"title": "Usage check"}, headers=person.headers)
    assert created.status_code == 201, created.text
    return str(created.json()["id"])


def admin_item(api, as_user, person: Person, group_by: str = "user") -> list[dict[str, object]]:
    """The person's items of the admin view: the whole view filtered here, and the same as the
    server's own `user_id` filter gives."""
    everyone = admin_pages(api, as_user, group_by=group_by)
    mine = [i for i in everyone if i["user_id"] == person.id]
    params = {"group_by": group_by, "user_id": person.id}
    own = api.get(ADMIN, params=params, headers=as_user["admin"])
    assert own.status_code == 200, own.text
    assert own.json()["items"] == mine and own.json()["has_more"] is False
    return mine


def admin_pages(api, as_user, limit: int = 5000, **params: object) -> list[dict[str, object]]:
    """Every item of an admin view, page after page of `limit` (each page checked)."""
    items: list[dict[str, object]] = []
    while len(items) < 100_000:  # an offset the server ignored would page forever
        query = {**params, "limit": limit, "offset": len(items)}
        response = api.get(ADMIN, params=query, headers=as_user["admin"])
        assert response.status_code == 200, response.text
        page = response.json()
        assert (page["offset"], page["limit"]) == (len(items), limit)
        assert len(page["items"]) <= limit and (len(page["items"]) == limit or not page["has_more"])
        items += page["items"]
        if not page["has_more"]:
            return items
    raise AssertionError("the admin view never ends")


def test_recorded_calls_add_up_in_my_page_the_conversation_and_the_admin_view(api, as_user, person):
    cid = conversation(api, person)
    calls = [call(cid, f"k-{uuid.uuid4().hex}", 120, 7), call(cid, f"k-{uuid.uuid4().hex}", 80, 3)]
    calls.append(call(cid, f"k-{uuid.uuid4().hex}", 10, 2, source="estimated", model="other"))

    written = api.post(WRITE, json={"calls": calls}, headers=person.agent)

    assert written.status_code == 200, written.text
    assert written.json() == {"recorded": 3, "duplicates": 0}
    me = api.get("/api/usage/me", headers=person.headers).json()
    assert totals(me["today"]) == (210, 12, 222, 3)
    assert len(me["by_day"]) == 30 and totals(me["by_day"][-1]) == (210, 12, 222, 3)
    assert me["by_day"][-1]["day"] == datetime.now(UTC).date().isoformat()
    assert [(c["conversation_id"], c["title"]) for c in me["by_conversation"]] == [
        (cid, "Usage check")
    ]
    assert me["budget"]["daily_tokens"] is None
    one = api.get(f"{CONV}/{cid}", headers=person.headers).json()
    assert totals(one["usage"]) == (210, 12, 222, 3)
    [by_user] = admin_item(api, as_user, person)
    assert totals(by_user) == (210, 12, 222, 3) and by_user["estimated_calls"] == 1
    assert by_user["username"] == person.username
    by_model = {i["model"]: totals(i) for i in admin_item(api, as_user, person, "model")}
    assert by_model == {"fake-model": (200, 10, 210, 2), "other": (10, 2, 12, 1)}
    [by_day] = admin_item(api, as_user, person, "day")
    assert by_day["day"] == me["by_day"][-1]["day"] and totals(by_day) == (210, 12, 222, 3)
    # Every item has the schema's fields; those of another grouping are null.
    fields = set(AdminUsageItem.model_fields)
    assert set(by_user) == set(by_day) == fields
    assert (by_user["day"], by_user["model"], by_user["daily_tokens"]) == (None, None, None)
    assert (by_day["model"], by_day["daily_tokens"], by_day["user_id"]) == (None, None, person.id)
    assert all(
        i["day"] is None and set(i) == fields for i in admin_item(api, as_user, person, "model")
    )


def test_the_admin_view_pages_in_the_order_asked_with_no_item_twice_or_lost(api, as_user, new_user):
    people = [new_user("viewer", prefix="paged") for _ in range(3)]
    for n, person in enumerate(people):  # 1,000 / 2,000 / 3,000 tokens, two models each
        cid = conversation(api, person)
        calls = [call(cid, uuid.uuid4().hex, 400 * (n + 1), 100 * (n + 1))]
        calls.append(call(cid, uuid.uuid4().hex, 400 * (n + 1), 100 * (n + 1), model="other"))
        assert api.post(WRITE, json={"calls": calls}, headers=person.agent).status_code == 200
    ids = {p.id for p in people}
    for group_by in ("user", "day", "model"):
        whole = admin_pages(api, as_user, group_by=group_by)
        # pages of 2 in the default order: the same items in the same order
        assert admin_pages(api, as_user, limit=2, group_by=group_by) == whole
        if group_by != "user":  # by day or model first, then by name
            key = str(group_by)
            assert [(i[key], i["username"]) for i in whole] == sorted(
                (i[key], i["username"]) for i in whole
            )
        by_total = admin_pages(
            api, as_user, limit=3, group_by=group_by, sort="total_tokens", order="desc"
        )
        assert sorted(map(json.dumps, by_total)) == sorted(map(json.dumps, whole))
        totals_desc = [int(i["total_tokens"]) for i in by_total]  # type: ignore[call-overload]
        assert totals_desc == sorted(totals_desc, reverse=True)
        ours = [i["username"] for i in by_total if i["user_id"] in ids]
        each = 2 if group_by == "model" else 1  # by model: a row for each of the two models
        assert ours == [p.username for p in reversed(people) for _ in range(each)]
    by_name = admin_pages(api, as_user, group_by="user", sort="username", order="desc")
    names = [str(i["username"]) for i in by_name]
    assert names == sorted(names, reverse=True)
    past = api.get(ADMIN, params={"offset": 10**6}, headers=as_user["admin"])
    assert past.status_code == 200 and past.json()["items"] == [] and not past.json()["has_more"]


@pytest.mark.parametrize(
    "params",
    [
        {"group_by": "user", "sort": "day"},  # a column of another grouping
        {"group_by": "day", "sort": "model"},
        {"sort": "password_hash"},
        {"order": "sideways"},
        {"limit": 0},
        {"limit": 5001},
        {"offset": -1},
        {"user_id": "not-a-uuid"},
    ],
)
def test_a_bad_page_request_is_a_422_that_names_the_parameter(api, as_user, params):
    response = api.get(ADMIN, params=params, headers=as_user["admin"])
    assert response.status_code == 422, response.text
    named = {"group_by": "sort"}.get(next(iter(params)), next(iter(params)))
    assert named in response.text


def test_a_write_retried_after_a_dropped_connection_counts_once(api, backend_url, sql, person):
    cid = conversation(api, person)
    body = json.dumps({"calls": [call(cid, f"drop-{uuid.uuid4().hex}", 500, 50)]}).encode()
    url = urlsplit(backend_url)
    head = (
        f"POST {WRITE} HTTP/1.1\r\nHost: {url.netloc}\r\nContent-Type: application/json\r\n"
        f"Authorization: {person.agent['Authorization']}\r\n"
        f"X-On-Behalf-Of: {person.agent['X-On-Behalf-Of']}\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    with socket.create_connection((url.hostname, url.port), timeout=5) as raw:
        raw.sendall(head + body)  # the answer is never read: the connection drops
    deadline = time.monotonic() + 10
    while not scalar(sql, "SELECT count(*) FROM usage_calls WHERE conversation_id = %s", cid):
        assert time.monotonic() < deadline, "the first write never landed"
        time.sleep(0.05)

    again = api.post(
        WRITE, content=body, headers={**person.agent, "Content-Type": "application/json"}
    )
    twice = api.post(
        WRITE, content=body, headers={**person.agent, "Content-Type": "application/json"}
    )

    assert again.json() == {"recorded": 0, "duplicates": 1} == twice.json()
    me = api.get("/api/usage/me", headers=person.headers).json()
    assert totals(me["today"]) == (500, 50, 550, 1)
    usage = api.get(f"{CONV}/{cid}", headers=person.headers).json()["usage"]
    assert totals(usage) == (500, 50, 550, 1)


def test_a_viewer_sees_only_their_own_usage_and_reaches_no_admin_route(api, as_user, new_user):
    me, other = new_user("viewer", prefix="usage"), new_user("viewer", prefix="usage")
    theirs = conversation(api, other)
    api.post(WRITE, json={"calls": [call(theirs, uuid.uuid4().hex, 9, 1)]}, headers=other.agent)

    page = api.get("/api/usage/me", headers=me.headers).json()

    assert totals(page["today"]) == (0, 0, 0, 0) and page["by_conversation"] == []
    assert api.get(f"{CONV}/{theirs}", headers=me.headers).status_code == 404
    assert api.get("/api/admin/usage", headers=me.headers).status_code == 403
    put = api.put(
        f"/api/admin/users/{me.id}/budget", json={"daily_tokens": 10**9}, headers=me.headers
    )
    assert put.status_code == 403 and put.json()["error"]["code"] == "FORBIDDEN"
    # nor write usage into someone else's conversation, nor as the browser
    forged = api.post(
        WRITE, json={"calls": [call(theirs, uuid.uuid4().hex, 1, 1)]}, headers=me.agent
    )
    assert forged.status_code == 404
    browser = api.post(
        WRITE, json={"calls": [call(None, uuid.uuid4().hex, 1, 1)]}, headers=me.headers
    )
    assert browser.status_code == 403


def test_an_admin_sets_and_removes_a_budget_audited_and_the_lease_answer_carries_it(
    api, as_user, sql, person
):
    cid = conversation(api, person)
    api.post(WRITE, json={"calls": [call(cid, uuid.uuid4().hex, 30, 12)]}, headers=person.agent)
    path = f"/api/admin/users/{person.id}/budget"

    negative = api.put(path, json={"daily_tokens": -1}, headers=as_user["admin"])
    put = api.put(path, json={"daily_tokens": 40}, headers=as_user["admin"])

    assert negative.status_code == 422
    assert put.status_code == 200, put.text
    assert put.json()["daily_tokens"] == 40 and put.json()["tokens_today"] == 42
    lease = api.put(
        f"/api/agent/conversations/{cid}/lease", json={"holder": "usage-test"}, headers=person.agent
    )
    usage = lease.json()["usage"]
    assert (usage["tokens_today"], usage["daily_tokens"]) == (42, 40)
    assert datetime.fromisoformat(usage["resets_at"]) > datetime.now(UTC)
    me = api.get("/api/usage/me", headers=person.headers).json()
    assert me["budget"]["daily_tokens"] == 40
    removed = api.put(path, json={"daily_tokens": None}, headers=as_user["admin"])
    assert removed.status_code == 200 and removed.json()["daily_tokens"] is None
    assert api.get("/api/usage/me", headers=person.headers).json()["budget"]["daily_tokens"] is None
    rows = audit_rows(sql, action="user.budget", resource_id=person.id)
    assert [r["details"]["daily_tokens"] for r in rows] == [40, None]
    assert rows[1]["details"]["previous"] == 40 and rows[0]["actor_username"] == "admin"
    missing = api.put(
        f"/api/admin/users/{uuid.uuid4()}/budget",
        json={"daily_tokens": 1},
        headers=as_user["admin"],
    )
    assert missing.status_code == 404
