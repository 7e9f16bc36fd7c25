"""Debug records over raw HTTP: the agent writes one per assistant row (dual identity), its
owner reads it, anybody else (or an unknown id) gets 404, and the bounds are enforced."""

from __future__ import annotations

from typing import Any

import httpx

from tests.conftest import bearer

BASE = "/api/debug"


def call(content: str = "Hello", **extra: Any) -> dict[str, Any]:
    return {
        "run_id": None,
        "source": "chat",
        "request": {
            "model": "scripted",
            "params": {"stream": True, "temperature": 0.1},
            "messages": [
                {"role": "system", "content": "You are the assistant."},
                {"role": "user", "content": content},
            ],
            "tools": [{"type": "function", "function": {"name": "get_dashboard"}}],
        },
        "response": {
            "content": "Hi.",
            "tool_calls": [],
            "finish_reason": "stop",
            "usage": {"input_tokens": 12, "output_tokens": 2, "total_tokens": 14},
        },
        "timing": {
            "start_time": "2026-12-01T10:00:00+00:00",
            "end_time": "2026-12-01T10:00:01.250000+00:00",
            "duration_ms": 1250,
        },
        **extra,
    }


def turn(api: httpx.Client, headers: dict[str, str]) -> tuple[str, int, int]:
    """A conversation with a question and an answer: (id, user row id, assistant row id)."""
    created = api.post("/api/assistant/conversations", json={}, headers=headers)
    assert created.status_code == 201, created.text
    cid = str(created.json()["id"])
    ids = []
    for role in ("user", "assistant"):
        body = {"role": role, "content": f"{role} text", "metadata": {}}
        row = api.post(f"/api/assistant/conversations/{cid}/messages", json=body, headers=headers)
        assert row.status_code in (200, 201), row.text
        ids.append(int(row.json()["id"]))
    return cid, ids[0], ids[1]


def test_the_agent_writes_a_record_and_only_its_owner_reads_it(api, as_user, as_agent, sql):
    _, _, answer = turn(api, as_agent["editor"])
    written = api.put(f"{BASE}/{answer}", json={"calls": [call()]}, headers=as_agent["editor"])
    assert written.status_code == 200, written.text
    # a receipt, not the record sent back (a record can be 2 MB)
    receipt = written.json()
    assert set(receipt) == {"message_id", "calls", "dropped_calls", "created_at"}
    assert (receipt["message_id"], receipt["calls"], receipt["dropped_calls"]) == (answer, 1, 0)

    mine = api.get(f"{BASE}/{answer}", headers=as_user["editor"])

    assert mine.status_code == 200, mine.text
    body = mine.json()
    assert body["message_id"] == answer and body["dropped_calls"] == 0
    (recorded,) = body["calls"]
    assert recorded["request"]["messages"][1] == {"role": "user", "content": "Hello"}
    assert recorded["response"]["usage"]["total_tokens"] == 14
    assert recorded["timing"]["duration_ms"] == 1250
    (stored,) = sql.execute(
        "select calls from debug_records where message_id = %s", (answer,)
    ).fetchone()
    assert stored[0]["request"]["tools"][0]["function"]["name"] == "get_dashboard"
    for other in ("viewer", "admin"):
        theirs = api.get(f"{BASE}/{answer}", headers=as_user[other])
        assert theirs.status_code == 404, theirs.text
        assert theirs.json()["error"]["code"] == "NOT_FOUND"


def test_an_unknown_message_or_one_without_a_record_is_404(api, as_user, as_agent):
    _, _, answer = turn(api, as_agent["viewer"])
    for message_id in (answer, 9_000_000_000):
        missing = api.get(f"{BASE}/{message_id}", headers=as_user["viewer"])
        assert missing.status_code == 404, missing.text
        assert missing.json()["error"]["code"] == "NOT_FOUND"


def test_a_record_is_written_again_in_place_and_goes_with_its_message(api, as_user, as_agent, sql):
    cid, _, answer = turn(api, as_agent["editor"])
    path = f"{BASE}/{answer}"
    first = api.put(path, json={"calls": [call("one")]}, headers=as_agent["editor"])
    assert first.is_success, first.text
    again = {"calls": [call("one"), call("two")], "dropped_calls": 3}
    second = api.put(path, json=again, headers=as_agent["editor"])
    assert second.is_success, second.text
    assert (second.json()["calls"], second.json()["dropped_calls"]) == (2, 3)
    assert second.json()["created_at"] == first.json()["created_at"]  # the same row, replaced

    body = api.get(path, headers=as_user["editor"]).json()

    assert [c["request"]["messages"][1]["content"] for c in body["calls"]] == ["one", "two"]
    assert body["dropped_calls"] == 3
    sql.execute("delete from agent_messages where id = %s", (answer,))
    sql.commit()
    left = sql.execute("select count(*) from debug_records where message_id = %s", (answer,))
    assert left.fetchone()[0] == 0
    assert cid


def test_only_the_agent_writes_and_only_for_its_users_assistant_rows(api, as_user, as_agent):
    _, question, answer = turn(api, as_agent["editor"])
    body = {"calls": [call()]}

    browser = api.put(f"{BASE}/{answer}", json=body, headers=as_user["editor"])
    someone_else = api.put(f"{BASE}/{answer}", json=body, headers=as_agent["viewer"])
    a_question = api.put(f"{BASE}/{question}", json=body, headers=as_agent["editor"])

    assert browser.status_code == 403, browser.text
    assert someone_else.status_code == 404, someone_else.text
    assert a_question.status_code == 422 and a_question.json()["error"]["code"] == "NOT_ASSISTANT"


def test_a_record_past_its_bounds_is_refused_with_the_envelope(api, as_agent):
    _, _, answer = turn(api, as_agent["editor"])
    path = f"{BASE}/{answer}"

    too_many = api.put(path, json={"calls": [call()] * 51}, headers=as_agent["editor"])
    too_large = api.put(path, json={"calls": [call("x" * 2_100_000)]}, headers=as_agent["editor"])

    for refused in (too_many, too_large):
        assert refused.status_code == 422, refused.text[:300]
        assert refused.json()["error"]["code"] == "INVALID_INPUT"


def test_without_a_token_the_record_is_401(api, as_agent):
    _, _, answer = turn(api, as_agent["editor"])
    assert api.get(f"{BASE}/{answer}").status_code == 401
    assert api.get(f"{BASE}/{answer}", headers=bearer("not-a-jwt")).status_code == 401
