"""External MCP tools (CONTRACT.md, "External MCP tools"): an MCP server made with the SDK
(tests/fakes/mcp_server.py) started by the test, registered by an admin over raw HTTP, offered to
the agent's model by role, run as tool cards, confirmed through the card, killed mid-session;
its header secret never stored or shown in the clear."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from tests.agent import mcp_support
from tests.agent.mcp_support import SECRET, conversation_of
from tests.agent.support import Chat, confirm_id, kinds, of_type, text_of
from tests.backend.support import assert_error, audit_rows
from tests.conftest import bearer

external, quick_agent, register = (
    mcp_support.external,
    mcp_support.quick_agent,
    mcp_support.register,
)


def test_an_admin_adds_lists_changes_and_removes_a_server_never_seeing_its_secret(
    api, tokens, register, sql
):
    created = register(confirm_tools=["wipe"], min_role="editor")
    assert created["header_names"] == ["X-Api-Key"] and "headers" not in created
    assert created["min_role"] == "editor" and created["confirm_tools"] == ["wipe"]
    listed = api.get("/api/admin/mcp-servers", headers=bearer(tokens["admin"]))
    assert listed.status_code == 200, listed.text
    (mine,) = [s for s in listed.json()["items"] if s["id"] == created["id"]]
    assert mine["status"] == "ok"
    assert {t["name"] for t in mine["tools"]} == {
        "echo", "wipe", "note", "peek", "slow", "fail", "big", "call_tool"
    }  # fmt: skip
    changed = api.patch(
        f"/api/admin/mcp-servers/{created['id']}",
        json={"enabled_tools": ["echo", "wipe"]},
        headers=bearer(tokens["admin"]),
    )
    assert changed.status_code == 200 and changed.json()["enabled_tools"] == ["echo", "wipe"]
    row = sql.execute(
        "SELECT headers_sealed, header_names FROM mcp_servers WHERE id = %s", (created["id"],)
    ).fetchone()
    assert row[0] and SECRET not in row[0] and row[1] == ["X-Api-Key"]
    answers = json.dumps([created, listed.json(), changed.json()])
    assert SECRET not in answers
    rows = audit_rows(sql, resource_type="mcp_server", resource_id=created["id"])
    assert [r["action"] for r in rows] == ["mcp_server.create", "mcp_server.update"]
    assert SECRET not in json.dumps([dict(r) for r in rows], default=str)
    removed = api.delete(f"/api/admin/mcp-servers/{created['id']}", headers=bearer(tokens["admin"]))
    assert removed.status_code == 204


@pytest.mark.parametrize("role", ["viewer", "editor"])
def test_only_admins_manage_servers(api, tokens, external, role):
    body = {"name": "nope", "url": external.url}
    refused = api.post("/api/admin/mcp-servers", json=body, headers=bearer(tokens[role]))
    assert_error(refused, 403, "FORBIDDEN")
    assert_error(api.get("/api/admin/mcp-servers", headers=bearer(tokens[role])), 403, "FORBIDDEN")
    missing = api.delete(f"/api/admin/mcp-servers/{uuid.uuid4()}", headers=bearer(tokens["admin"]))
    assert_error(missing, 404, "NOT_FOUND")


@pytest.mark.parametrize(
    "body",
    [
        {"name": "Bad-Name", "url": "http://127.0.0.1:1/mcp"},
        {"name": "ok_name", "url": "ftp://x/mcp"},
        {"name": "ok_name", "url": "http://127.0.0.1:1/mcp", "min_role": "root"},
        {"name": "ok_name", "url": "http://127.0.0.1:1/mcp", "headers": {"Bad Header": "x"}},
    ],
)
def test_bad_server_definitions_are_422(api, tokens, body):
    refused = api.post("/api/admin/mcp-servers", json=body, headers=bearer(tokens["admin"]))
    assert_error(refused, 422, "INVALID_INPUT")


def _offered(fake_llm: Any) -> set[str]:
    tools = fake_llm.requests[-1].get("tools") or []
    return {tool["function"]["name"] for tool in tools}


_conversation = conversation_of


def test_tools_are_offered_by_min_role_in_dynamic_mode_only(
    quick_agent, api, tokens, register, fake_llm
):
    server = register(min_role="editor", enabled_tools=["echo"])
    chat = Chat(quick_agent)
    for role, expected in (("viewer", False), ("editor", True)):
        fake_llm.enqueue({"text": "ok"})
        chat.send(tokens[role], _conversation(api, tokens[role]), "hello")
        assert (f"{server['name']}__echo" in _offered(fake_llm)) is expected, role
        assert f"{server['name']}__wipe" not in _offered(fake_llm)  # not enabled
    fake_llm.enqueue({"text": "plain"})
    cid = _conversation(api, tokens["editor"])
    chat.send(tokens["editor"], cid, "hello", options={"mode": "none"})
    assert _offered(fake_llm) == set()


def test_an_external_tool_streams_as_a_card_and_is_audited(
    quick_agent, api, tokens, register, fake_llm, sql
):
    name = register()["name"] + "__echo"
    fake_llm.enqueue(
        {"tool_calls": [{"name": name, "args": {"text": "hi there"}}]}, {"text": "Echoed."}
    )
    outputs = Chat(quick_agent).send(tokens["admin"], _conversation(api, tokens["admin"]), "echo")
    final = outputs[-1]
    assert kinds(final) == ["tool_end", "text"], final
    card = final[0]["metadata"]
    assert card["tool"] == name and "echo: hi there" in json.dumps(card["output"])
    assert text_of(final) == "Echoed."
    (row,) = audit_rows(sql, action="agent.tool_call", resource_id=name)
    assert row["outcome"] == "success" and row["actor_username"] == "admin"


def test_a_confirm_tool_waits_for_the_card_and_runs_on_confirm(
    quick_agent, api, tokens, register, fake_llm, external
):
    name = register(confirm_tools=["wipe"])["name"] + "__wipe"
    target = f"table-{uuid.uuid4().hex[:6]}"
    fake_llm.enqueue({"tool_calls": [{"name": name, "args": {"target": target}}]})
    chat, cid = Chat(quick_agent), _conversation(api, tokens["admin"])
    asked = chat.send(tokens["admin"], cid, "wipe it")
    (card,) = of_type(asked[-1], "confirm_required")
    assert card["metadata"]["tool"] == name and card["metadata"]["args"] == {"target": target}
    wiped = external.wiped.read_text() if external.wiped.exists() else ""
    assert target not in wiped
    fake_llm.enqueue({"text": "Wiped."})
    done = chat.decide(tokens["admin"], cid, "confirm", confirm_id(asked))
    assert kinds(done[-1]) == ["tool_end", "text"], done[-1]
    assert target in external.wiped.read_text()


def test_failures_are_tool_errors_and_the_run_goes_on(
    quick_agent, api, tokens, register, fake_llm, database_url, sql
):
    server = register()["name"]
    chat = Chat(quick_agent)
    cases = [("fail", {}, "MCP_ERROR"), ("slow", {"seconds": 10}, "MCP_UNAVAILABLE")]
    for tool, args, code in cases:
        fake_llm.enqueue(
            {"tool_calls": [{"name": f"{server}__{tool}", "args": args}]}, {"text": "Went on."}
        )
        final = chat.send(tokens["admin"], _conversation(api, tokens["admin"]), tool)[-1]
        assert kinds(final) == ["tool_error", "text"], final
        assert final[0]["metadata"]["error"]["code"] == code
        assert text_of(final) == "Went on."
    fake_llm.enqueue({"tool_calls": [{"name": f"{server}__big", "args": {}}]}, {"text": "Big."})
    final = chat.send(tokens["admin"], _conversation(api, tokens["admin"]), "big")[-1]
    assert len(json.dumps(final[0]["metadata"]["output"])) < 10_000


def test_a_killed_server_is_unavailable_and_its_secret_is_nowhere(
    quick_agent, api, tokens, register, fake_llm, external, sql
):
    server = register()["name"]
    external.kill()
    fake_llm.enqueue(
        {"tool_calls": [{"name": f"{server}__echo", "args": {"text": "x"}}]}, {"text": "Went on."}
    )
    cid = _conversation(api, tokens["admin"])
    final = Chat(quick_agent).send(tokens["admin"], cid, "echo")[-1]
    assert kinds(final) == ["tool_error", "text"], final
    assert final[0]["metadata"]["error"]["code"] == "MCP_UNAVAILABLE"
    listed = api.get("/api/admin/mcp-servers", headers=bearer(tokens["admin"])).json()
    (mine,) = [s for s in listed["items"] if s["name"] == server]
    assert mine["status"] == "unreachable"
    for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "assistant_audit",
                  "agent_messages", "debug_records"):  # fmt: skip
        dump = sql.execute(
            f"SELECT count(*) FROM {table} WHERE {table}::text LIKE %s", (f"%{SECRET}%",)
        )
        assert dump.fetchone()[0] == 0, table
    assert SECRET not in json.dumps(fake_llm.requests)
