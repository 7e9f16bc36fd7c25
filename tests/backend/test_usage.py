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
    response = api.get("/api/admin/usage", params={"group_by": group_by}, headers=as_user["admin"])
    assert response.status_code == 200, response.text
    return [i for i in response.json()["items"] if i["user_id"] == person.id]


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
