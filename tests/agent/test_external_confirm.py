"""Which external MCP tools ask a person first (CONTRACT.md, "External MCP tools"): only a tool
the server annotates `readOnlyHint: true`, and the admin has not listed, runs at once; a write
the server does not annotate, or one reached through a proxy tool (`call_tool`, which even
claims to be read-only here), waits for the confirmation card. And past
`agent.external_tools_budget_chars` the model finds tools through `find_tools`, which follow the
same rule. Black-box: the SDK-made server of tests/fakes/mcp_server.py, the agent over Gradio."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.agent import mcp_support
from tests.agent.mcp_support import conversation_of, wait_ready
from tests.agent.support import Chat, confirm_id, kinds, of_type
from tests.conftest import bearer

external, quick_agent, register = (
    mcp_support.external,
    mcp_support.quick_agent,
    mcp_support.register,
)


def _written(external: mcp_support.FakeServer) -> list[str]:
    """What the server's writing tools ran, one line each."""
    return external.wiped.read_text().splitlines() if external.wiped.exists() else []


def _offered(request: dict[str, Any]) -> set[str]:
    return {tool["function"]["name"] for tool in request.get("tools") or []}


def test_the_listing_says_for_each_tool_whether_it_asks_first_and_why(api, tokens, register):
    created = register(confirm_tools=["peek"])
    listed = api.get("/api/admin/mcp-servers", headers=bearer(tokens["admin"])).json()
    (mine,) = [s for s in listed["items"] if s["id"] == created["id"]]
    rules = {t["name"]: (t["confirm"], t["confirm_reason"], t["read_only"]) for t in mine["tools"]}
    assert rules["echo"] == (False, "read_only", True)
    assert rules["peek"] == (True, "listed", True)
    assert rules["wipe"] == (True, "not_read_only", False)
    assert rules["note"] == (True, "not_read_only", False)
    assert rules["call_tool"] == (True, "proxy", True)


def test_a_write_the_server_does_not_annotate_waits_and_a_rejected_one_never_runs(
    quick_agent, api, tokens, register, fake_llm, external
):
    name = register()["name"] + "__note"
    text = f"n-{uuid.uuid4().hex[:6]}"
    fake_llm.enqueue({"tool_calls": [{"name": name, "args": {"text": text}}]})
    chat, cid = Chat(quick_agent), conversation_of(api, tokens["admin"])
    asked = chat.send(tokens["admin"], cid, "note it")
    (card,) = of_type(asked[-1], "confirm_required")
    assert card["metadata"]["tool"] == name
    fake_llm.enqueue({"text": "Not noted."})
    chat.decide(tokens["admin"], cid, "reject", confirm_id(asked))
    assert f"note:{text}" not in _written(external)


def test_a_write_through_the_proxy_waits_for_the_card_and_runs_once_on_confirm(
    quick_agent, api, tokens, register, fake_llm, external
):
    name = register()["name"] + "__call_tool"
    target = f"t-{uuid.uuid4().hex[:6]}"
    args = {"name": "wipe", "arguments": {"target": target}}
    fake_llm.enqueue({"tool_calls": [{"name": name, "args": args}]})
    chat, cid = Chat(quick_agent), conversation_of(api, tokens["admin"])
    asked = chat.send(tokens["admin"], cid, "wipe it through the proxy")
    (card,) = of_type(asked[-1], "confirm_required")
    assert card["metadata"]["tool"] == name and card["metadata"]["args"] == args
    assert target not in _written(external)
    fake_llm.enqueue({"text": "Wiped."})
    done = chat.decide(tokens["admin"], cid, "confirm", confirm_id(asked))
    assert kinds(done[-1]) == ["tool_end", "text"], done[-1]
    assert _written(external).count(target) == 1


@pytest.mark.parametrize(
    ("target", "server", "asks"),
    [
        ("echo", {}, False),  # read-only, not listed: at once, through the proxy too
        ("peek", {"confirm_tools": ["peek"]}, True),  # read-only but listed
        ("nope", {}, True),  # not in the server's listing
        ("echo", {"enabled_tools": ["call_tool"]}, True),  # the target is not enabled
        ("call_tool", {}, True),  # a proxy of a proxy
    ],
)
def test_a_proxy_call_is_judged_by_the_tool_it_names(
    quick_agent, api, tokens, register, fake_llm, target, server, asks
):
    name = register(**server)["name"] + "__call_tool"
    args = {"name": target, "arguments": {"text": "hi"} if target == "echo" else {}}
    fake_llm.enqueue({"tool_calls": [{"name": name, "args": args}]}, {"text": "Done."})
    outputs = Chat(quick_agent).send(
        tokens["admin"], conversation_of(api, tokens["admin"]), "proxy"
    )
    if asks:
        assert of_type(outputs[-1], "confirm_required"), outputs[-1]
    else:
        assert kinds(outputs[-1]) == ["tool_end", "text"], outputs[-1]
        assert "echo: hi" in json.dumps(outputs[-1][0]["metadata"]["output"])


@pytest.fixture(scope="module")
def small_budget_agent(start_agent: Any) -> Iterator[str]:
    """An agent whose external tools fit in 600 characters: the fake server's do not."""
    env = {"AGENT__MCP_REFRESH_S": "0", "AGENT__EXTERNAL_TOOLS_BUDGET_CHARS": "600"}
    with start_agent(**env) as (base, _proc):
        wait_ready(base)
        yield base


def test_past_the_budget_the_model_finds_tools_and_they_follow_the_same_rule(
    small_budget_agent, api, tokens, register, fake_llm, external
):
    server = register()["name"]
    chat, cid = Chat(small_budget_agent), conversation_of(api, tokens["admin"])
    fake_llm.enqueue(
        {"tool_calls": [{"name": "find_tools", "args": {"query": "echo text back"}}]},
        {"tool_calls": [{"name": f"{server}__echo", "args": {"text": "found"}}]},
        {"text": "Echoed."},
    )
    final = chat.send(tokens["admin"], cid, "echo found")[-1]
    plain, after_search = fake_llm.requests[0], fake_llm.requests[1]
    assert "find_tools" in _offered(plain) and not any(server in n for n in _offered(plain))
    assert f"{server}__echo" in _offered(after_search)  # bound once found
    found = of_type(final, "tool_end")
    assert [c["metadata"]["tool"] for c in found] == ["find_tools", f"{server}__echo"], final
    listed = found[0]["metadata"]["output"]["tools"]
    assert listed[0]["name"] == f"{server}__echo" and listed[0]["parameters"]["properties"]
    assert "echo: found" in json.dumps(found[1]["metadata"]["output"])
    # A write found the same way still asks first.
    target = f"t-{uuid.uuid4().hex[:6]}"
    fake_llm.enqueue(
        {"tool_calls": [{"name": "find_tools", "args": {"query": "wipe a target"}}]},
        {"tool_calls": [{"name": f"{server}__wipe", "args": {"target": target}}]},
    )
    asked = chat.send(tokens["admin"], cid, "wipe it")
    (card,) = of_type(asked[-1], "confirm_required")
    assert card["metadata"]["tool"] == f"{server}__wipe" and target not in _written(external)
