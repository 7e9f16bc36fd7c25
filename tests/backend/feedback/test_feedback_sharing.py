"""Feedback, sharing and export over real HTTP (CONTRACT.md, "Feedback, sharing, export"):
own rows only (someone else's id is 404 on every route), bounded notes, audited writes, a
snapshot without debug records or file contents that any signed-in user reads until revoked."""

from __future__ import annotations

import json
import uuid
from typing import Any

import jwt
import pytest

from tests.backend.support import (
    NewUser,
    Person,
    append,
    assert_error,
    audit_rows,
    create_conversation,
)

DEPLOY = {"dashboard_id": 42, "ref": "main", "environment": "staging"}
FILE_TEXT = "TOP-SECRET-FILE-CONTENT"


def parts(*items: dict[str, Any]) -> dict[str, Any]:
    return {"parts": [{"role": "assistant", **i} for i in items]}


def text_part(content: str, message_id: int = 0) -> dict[str, Any]:
    return {"content": content, "metadata": {"message_id": message_id}}


def tool_part(tool: str, args: dict[str, Any], output: Any) -> dict[str, Any]:
    meta = {"type": "tool_end", "tool": tool, "call_id": f"call_{tool}", "input": args}
    return {"content": "", "metadata": {**meta, "output": output, "title": tool, "status": "done"}}


def conversation_with_answers(api: Any, person: Person) -> dict[str, Any]:
    """A conversation: a question answered with a tool, then a confirmed deploy in two turns."""
    cid = create_conversation(api, person.headers, "Sales review")["id"]
    q1 = append(api, person.agent, cid, "Show dashboard 42")
    a1 = append(
        api,
        person.agent,
        cid,
        "Dashboard 42 is fine.",
        "assistant",
        parts(
            tool_part("get_dashboard", {"dashboard_id": 42}, {"id": 42}),
            tool_part("read_file", {"key": "notes.txt"}, {"content": FILE_TEXT}),
            text_part("Dashboard 42 is fine."),
        ),
    )
    q2 = append(api, person.agent, cid, "Deploy dashboard 42 to staging")
    ask = {
        "content": "Deploy dashboard 42 (main) to staging",
        "metadata": {"type": "confirm_required", "tool": "deploy_dashboard", "args": DEPLOY},
    }
    a2 = append(api, person.agent, cid, "", "assistant", parts(ask))
    decision = {"type": "decision", "decision": "confirm", "tool": "deploy_dashboard"}
    append(api, person.agent, cid, "Confirmed: deploy", "user", {**decision, "args": DEPLOY})
    a3 = append(
        api,
        person.agent,
        cid,
        "Deployed.",
        "assistant",
        parts(tool_part("deploy_dashboard", DEPLOY, {"id": 7}), text_part("Deployed.")),
    )
    return {"id": cid, "q1": q1, "a1": a1, "q2": q2, "a2": a2, "a3": a3}


def rate(api: Any, person: Person, message_id: int, rating: str, comment: str | None = None):
    body: dict[str, Any] = {"rating": rating}
    if comment is not None:
        body["comment"] = comment
    return api.put(
        f"/api/assistant/messages/{message_id}/feedback", json=body, headers=person.headers
    )


@pytest.fixture()
def owner(new_user: NewUser) -> Person:
    return new_user("viewer", "fb")


@pytest.fixture()
def stranger(new_user: NewUser) -> Person:
    return new_user("viewer", "other")


def test_rating_an_own_answer_is_stored_shown_in_history_replaced_and_removed(api, owner, sql):
    conv = conversation_with_answers(api, owner)
    answer = conv["a3"]["id"]

    rated = rate(api, owner, answer, "down", "Wrong environment")

    assert rated.status_code == 200, rated.text
    body = rated.json()
    assert body["message_id"] == answer and body["rating"] == "down"
    assert body["comment"] == "Wrong environment" and body["updated_at"]
    items = api.get(
        f"/api/assistant/conversations/{conv['id']}/history", headers=owner.headers
    ).json()["items"]
    by_id = {i["id"]: i for i in items}
    assert by_id[answer]["feedback"] == {"rating": "down", "comment": "Wrong environment"}
    assert by_id[conv["a1"]["id"]]["feedback"] is None

    assert rate(api, owner, answer, "up").json()["comment"] is None
    removed = api.delete(f"/api/assistant/messages/{answer}/feedback", headers=owner.headers)
    assert removed.status_code == 204
    count = sql.execute("select count(*) from message_feedback where message_id = %s", (answer,))
    assert count.fetchone()[0] == 0
    rows = audit_rows(sql, resource_type="message", resource_id=str(answer))
    assert [r["action"] for r in rows] == ["feedback.rate", "feedback.rate", "feedback.delete"]
    assert rows[0]["details"]["rating"] == "down" and rows[0]["actor_username"] == owner.username


def test_a_user_row_cannot_be_rated_and_a_long_or_unknown_body_is_refused(api, owner, sql):
    conv = conversation_with_answers(api, owner)
    answer = conv["a1"]["id"]

    assert_error(rate(api, owner, conv["q1"]["id"], "up"), 422, "NOT_ASSISTANT")
    assert_error(rate(api, owner, answer, "up", "x" * 2001), 422, "INVALID_INPUT")
    assert rate(api, owner, answer, "up", "x" * 2000).status_code == 200
    assert_error(rate(api, owner, answer, "sideways"), 422, "INVALID_INPUT")
    extra = api.put(
        f"/api/assistant/messages/{answer}/feedback",
        json={"rating": "up", "user_id": str(uuid.uuid4())},
        headers=owner.headers,
    )
    assert_error(extra, 422, "INVALID_INPUT")


def test_someone_elses_ids_are_not_found_on_every_route(api, owner, stranger, sql):
    conv = conversation_with_answers(api, owner)
    cid, answer = conv["id"], conv["a1"]["id"]
    assert rate(api, owner, answer, "up").status_code == 200
    shared = api.post(f"/api/assistant/conversations/{cid}/share", headers=owner.headers)
    assert shared.status_code == 201
    before = audit_rows(sql, actor_username=stranger.username)

    calls = [
        api.put(
            f"/api/assistant/messages/{answer}/feedback",
            json={"rating": "down"},
            headers=stranger.headers,
        ),
        api.delete(f"/api/assistant/messages/{answer}/feedback", headers=stranger.headers),
        api.post(f"/api/assistant/conversations/{cid}/share", headers=stranger.headers),
        api.delete(f"/api/assistant/conversations/{cid}/share", headers=stranger.headers),
        api.get(f"/api/assistant/conversations/{cid}/export?format=md", headers=stranger.headers),
        api.get(f"/api/assistant/conversations/{cid}/export?format=json", headers=stranger.headers),
        api.put(
            "/api/assistant/messages/999999999/feedback",
            json={"rating": "up"},
            headers=owner.headers,
        ),
        api.post(f"/api/assistant/conversations/{uuid.uuid4()}/share", headers=owner.headers),
    ]

    for response in calls:
        assert_error(response, 404, "NOT_FOUND")
    assert sql.execute(
        "select rating from message_feedback where message_id = %s", (answer,)
    ).fetchone() == ("up",)
    still = api.get(f"/api/shared/{shared.json()['share_id']}", headers=stranger.headers)
    assert still.status_code == 200  # the stranger's revoke did nothing
    assert audit_rows(sql, actor_username=stranger.username) == before


def test_forged_or_missing_tokens_are_refused_on_every_route(api, owner):
    conv = conversation_with_answers(api, owner)
    cid = conv["id"]
    share_id = api.post(f"/api/assistant/conversations/{cid}/share", headers=owner.headers).json()[
        "share_id"
    ]
    claims = jwt.decode(owner.token, options={"verify_signature": False})
    forged = {
        "Authorization": "Bearer " + jwt.encode(claims, "not-the-secret-" + "x" * 32, "HS256")
    }
    routes = [
        ("PUT", f"/api/assistant/messages/{conv['a1']['id']}/feedback", {"rating": "up"}),
        ("DELETE", f"/api/assistant/messages/{conv['a1']['id']}/feedback", None),
        ("POST", f"/api/assistant/conversations/{cid}/share", None),
        ("DELETE", f"/api/assistant/conversations/{cid}/share", None),
        ("GET", f"/api/shared/{share_id}", None),
        ("GET", f"/api/assistant/conversations/{cid}/export?format=md", None),
        ("GET", "/api/admin/feedback", None),
        ("GET", "/api/admin/feedback/cases?rating=up", None),
    ]
    for method, path, body in routes:
        for headers in (forged, {}):
            response = api.request(method, path, json=body, headers=headers)
            assert_error(response, 401, "UNAUTHORIZED")


def test_a_share_is_a_snapshot_refreshed_under_the_same_id_and_gone_after_revoke(
    api, owner, stranger, sql
):
    conv = conversation_with_answers(api, owner)
    cid = conv["id"]
    first = api.post(f"/api/assistant/conversations/{cid}/share", headers=owner.headers)
    assert first.status_code == 201, first.text
    share = first.json()
    assert share["url"] == f"/shared/{share['share_id']}" and share["created_at"]

    seen = api.get(f"/api/shared/{share['share_id']}", headers=stranger.headers)

    assert seen.status_code == 200, seen.text
    body = seen.json()
    assert body["title"] == "Sales review" and body["owner"] == owner.username
    assert [m["role"] for m in body["messages"]] == ["user", "assistant"] * 2 + [
        "user",
        "assistant",
    ]
    text = json.dumps(body)
    assert FILE_TEXT not in text and '"message_id"' not in text
    tools = [p["metadata"] for p in body["messages"][1]["metadata"]["parts"]]
    assert tools[0]["output"] == {"id": 42}
    assert tools[1]["output"] == {"omitted": "File contents are not shared."}
    assert body["messages"][4]["metadata"]["type"] == "decision"

    append(api, owner.agent, cid, "One more question")
    assert (
        len(
            api.get(f"/api/shared/{share['share_id']}", headers=stranger.headers).json()["messages"]
        )
        == 6
    )  # a snapshot: later messages are not in it
    again = api.post(f"/api/assistant/conversations/{cid}/share", headers=owner.headers).json()
    assert again["share_id"] == share["share_id"] and again["created_at"] == share["created_at"]
    refreshed = api.get(f"/api/shared/{share['share_id']}", headers=stranger.headers).json()
    assert len(refreshed["messages"]) == 7

    revoked = api.delete(f"/api/assistant/conversations/{cid}/share", headers=owner.headers)

    assert revoked.status_code == 204
    gone = api.get(f"/api/shared/{share['share_id']}", headers=stranger.headers)
    assert_error(gone, 404, "NOT_FOUND")
    assert_error(
        api.get(f"/api/shared/{share['share_id']}", headers=owner.headers), 404, "NOT_FOUND"
    )
    actions = [
        r["action"]
        for r in audit_rows(sql, resource_type="conversation", resource_id=cid)
        if r["action"] in ("conversation.share", "conversation.unshare")
    ]
    assert actions == ["conversation.share", "conversation.share", "conversation.unshare"]
    rows = audit_rows(sql, action="conversation.share", resource_id=cid)
    assert rows[-1]["details"]["share_id"] == share["share_id"] and rows[-1]["details"]["refreshed"]
    assert FILE_TEXT not in json.dumps([r["details"] for r in rows])


def test_a_new_share_after_a_revoke_has_a_new_id(api, owner, stranger):
    cid = conversation_with_answers(api, owner)["id"]
    first = api.post(f"/api/assistant/conversations/{cid}/share", headers=owner.headers).json()
    api.delete(f"/api/assistant/conversations/{cid}/share", headers=owner.headers)

    second = api.post(f"/api/assistant/conversations/{cid}/share", headers=owner.headers).json()

    assert second["share_id"] != first["share_id"]
    assert_error(
        api.get(f"/api/shared/{first['share_id']}", headers=stranger.headers), 404, "NOT_FOUND"
    )


@pytest.mark.parametrize("share_id", ["no-such-share", "a" * 65, "..%2F..%2Fetc"])
def test_an_unknown_or_malformed_share_id_is_refused(api, owner, share_id):
    response = api.get(f"/api/shared/{share_id}", headers=owner.headers)
    assert response.status_code in (404, 422)


def test_export_as_markdown_has_tool_and_confirmation_sections_and_json_has_every_row(api, owner):
    conv = conversation_with_answers(api, owner)
    cid = conv["id"]

    md = api.get(f"/api/assistant/conversations/{cid}/export?format=md", headers=owner.headers)
    js = api.get(f"/api/assistant/conversations/{cid}/export?format=json", headers=owner.headers)

    assert md.status_code == 200 and md.headers["content-type"].startswith("text/markdown")
    assert "attachment" in md.headers["content-disposition"]
    text = md.text
    assert text.startswith("# Sales review\n")
    assert "## You\n\nShow dashboard 42" in text
    assert "### Tool: get_dashboard (`get_dashboard`, done)" in text
    assert "### Confirmation asked: Deploy dashboard 42 (main) to staging" in text
    assert "### Decision: Confirmed: deploy" in text
    assert text.index("Confirmation asked") < text.index("Decision") < text.index("Deployed.")
    assert js.status_code == 200
    body = js.json()
    assert body["title"] == "Sales review" and body["created_at"]
    assert [m["id"] for m in body["messages"]][:2] == [conv["q1"]["id"], conv["a1"]["id"]]
    assert len(body["messages"]) == 6
    bad = api.get(f"/api/assistant/conversations/{cid}/export?format=pdf", headers=owner.headers)
    assert_error(bad, 422, "INVALID_INPUT")


def test_admins_list_ratings_with_question_answer_and_tools_and_export_cases(
    api, owner, as_user, tokens
):
    conv = conversation_with_answers(api, owner)
    assert rate(api, owner, conv["a1"]["id"], "up", "good").status_code == 200
    assert rate(api, owner, conv["a3"]["id"], "down", "wrong env").status_code == 200

    listed = api.get("/api/admin/feedback?limit=200", headers=as_user["admin"])
    ups = api.get("/api/admin/feedback?rating=up&limit=200", headers=as_user["admin"])
    cases = api.get("/api/admin/feedback/cases?rating=up", headers=as_user["admin"])
    downs = api.get("/api/admin/feedback/cases?rating=down", headers=as_user["admin"])

    assert listed.status_code == 200, listed.text
    mine = {i["message_id"]: i for i in listed.json()["items"] if i["username"] == owner.username}
    first, third = mine[conv["a1"]["id"]], mine[conv["a3"]["id"]]
    assert first["question"] == "Show dashboard 42" and first["answer"] == "Dashboard 42 is fine."
    assert first["tools"] == ["get_dashboard", "read_file"] and first["comment"] == "good"
    assert first["conversation_id"] == conv["id"] and first["rating"] == "up"
    assert third["question"] == "Deploy dashboard 42 to staging"
    assert third["tools"] == ["deploy_dashboard"]
    assert all(i["rating"] == "up" for i in ups.json()["items"])
    assert ups.json()["total"] <= listed.json()["total"]
    assert cases.headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in cases.text.splitlines()]
    assert {
        "query": "Show dashboard 42",
        "expected_tools": ["get_dashboard", "read_file"],
        "lang": "en",
    } in lines
    down_lines = [json.loads(line) for line in downs.text.splitlines()]
    assert {
        "query": "Deploy dashboard 42 to staging",
        "expected_tools": ["deploy_dashboard"],
        "lang": "en",
    } in down_lines
    for role in ("viewer", "editor"):
        assert_error(api.get("/api/admin/feedback", headers=as_user[role]), 403, "FORBIDDEN")
        refused = api.get("/api/admin/feedback/cases", headers=as_user[role])
        assert_error(refused, 403, "FORBIDDEN")


def test_the_admin_list_filters_by_date(api, owner, as_user):
    conv = conversation_with_answers(api, owner)
    rate(api, owner, conv["a1"]["id"], "up")

    future = api.get("/api/admin/feedback?from=2999-01-01", headers=as_user["admin"]).json()
    past = api.get("/api/admin/feedback?to=2000-01-01", headers=as_user["admin"]).json()
    bad = api.get("/api/admin/feedback?from=2026-02-01&to=2026-01-01", headers=as_user["admin"])

    assert future == {"items": [], "total": 0} and past == {"items": [], "total": 0}
    assert_error(bad, 422, "INVALID_INPUT")
