"""Multi-turn context (Story 4): loaded from the checkpoint by conversation, isolated between
conversations, and fitted to the model-input budget without losing the stored history."""

from __future__ import annotations

from langchain_core.messages import convert_to_messages
from langchain_core.messages.utils import count_tokens_approximately

from tests.agent.support import assert_valid_for_any_provider, kinds, text_of, thread_messages


def _contents(request: dict) -> list[str]:
    return [str(m.get("content") or "") for m in request["messages"]]


def test_the_second_turn_reaches_the_model_with_the_first(chat, tokens, conversation, fake_llm):
    cid = conversation("editor")
    fake_llm.enqueue(
        {"tool_calls": [{"name": "get_dashboard", "args": {"dashboard_id": 42}}]},
        {"text": "Dashboard 42 is the Sales overview."},
    )
    chat.send(tokens["editor"], cid, "Show me dashboard 42")
    fake_llm.enqueue(
        {"tool_calls": [{"name": "create_branch", "args": {"dashboard_id": 42, "name": "ctx-it"}}]},
        {"text": "Created branch ctx-it of dashboard 42."},
    )

    outputs = chat.send(tokens["editor"], cid, "Create a branch for it called ctx-it")

    request = fake_llm.requests[2]
    contents = _contents(request)
    assert contents[1] == "Show me dashboard 42"
    assert any("Sales overview" in c for c in contents[2:-1])
    assert contents[-1] == "Create a branch for it called ctx-it"
    assert_valid_for_any_provider(request)
    assert kinds(outputs[-1]) == ["tool_end", "text"]
    assert outputs[-1][0]["metadata"]["output"]["name"] == "ctx-it"


def test_a_new_conversation_sees_none_of_another_ones_context(chat, tokens, conversation, fake_llm):
    first, second = conversation(), conversation()
    fake_llm.enqueue({"text": "Noted: the codename is PELICAN."})
    chat.send(tokens["admin"], first, "Remember the codename PELICAN")
    fake_llm.enqueue({"text": "I do not know any codename."})

    chat.send(tokens["admin"], second, "What is the codename?")

    request = fake_llm.requests[-1]
    assert [m["role"] for m in request["messages"]] == ["system", "user"]
    assert "PELICAN" not in str(request)


def test_the_model_input_stays_within_the_token_budget_on_a_long_conversation(
    chat, tokens, conversation, fake_llm, database_url
):
    cid = conversation()
    turns = 8
    for i in range(turns):
        fake_llm.enqueue({"text": f"Answer {i}: " + "details " * 300})
        question = f"Question {i}: " + "context " * 500
        assert text_of(chat.send(tokens["admin"], cid, question)[-1]).startswith(f"Answer {i}")

    for request in fake_llm.requests:
        messages = convert_to_messages(request["messages"])
        assert count_tokens_approximately(messages) <= 4000
    last = fake_llm.requests[-1]
    assert _contents(last)[-1].startswith(f"Question {turns - 1}")
    assert last["messages"][1]["role"] == "user" and len(last["messages"]) < 2 * turns
    # the thread keeps every message (its checkpoints hold deltas, agent/perf/delta_state.py)
    assert len(thread_messages(database_url, cid)) == 2 * turns


def test_one_message_over_the_budget_is_shortened_for_the_model_only(
    chat, tokens, conversation, fake_llm
):
    cid = conversation()
    fake_llm.enqueue({"text": "That is a lot of text."})

    chat.send(tokens["admin"], cid, "word " * 8000)

    messages = convert_to_messages(fake_llm.requests[-1]["messages"])
    assert count_tokens_approximately(messages) <= 4000
    assert str(messages[-1].content).endswith("[...truncated]")
