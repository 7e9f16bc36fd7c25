"""The stream's Turn (agent/stream/): text coalescing per model call, tool cards that start
and end in place, the confirmation card, the stored record and `message_id`. No processes."""

from __future__ import annotations

import asyncio
import json
import uuid

from langchain_core.messages import AIMessage, AIMessageChunk, ToolMessage
from langchain_core.outputs import ChatGenerationChunk

from agent.hitl import Pending
from agent.marks import RETRY_EVENT, TOOL_BUDGET_MARK
from agent.stream import MAX_OUTPUT_CHARS, AnswerText, Turn, apply, updates
from tests.agent.unit.scripted import approval, say


def stream_text(turn: Turn, message_id: str, *deltas: str, node: str = "model") -> AnswerText:
    """One model call of `node` streaming `deltas` (as message `message_id`) through the run's
    token handler, as ChatOpenAI's stream calls it."""
    text, call = AnswerText(turn), uuid.uuid4()
    text.on_chat_model_start({}, [[]], run_id=call, metadata={"langgraph_node": node})
    for delta in deltas:
        piece = ChatGenerationChunk(message=AIMessageChunk(content=delta, id=message_id))
        text.on_llm_new_token(delta, chunk=piece, run_id=call)
    return text


def kinds(turn: Turn) -> list[str]:
    return [m["metadata"].get("type", "text") for m in turn.snapshot()]


def test_the_deltas_of_one_model_call_grow_one_message_and_a_new_call_starts_another():
    turn = Turn("t")
    stream_text(turn, "run-1", "Hel", "lo")
    stream_text(turn, "run-2", "Again")

    assert [m["content"] for m in turn.snapshot()] == ["Hello", "Again"]
    assert turn.open_text() == "Again"


def test_text_of_another_node_and_empty_deltas_are_not_shown():
    turn = Turn("t")
    stream_text(turn, "r", "hidden", node="tools")
    stream_text(turn, "r", "")

    assert turn.snapshot() == [] and turn.version == 0


def test_a_retried_call_drops_its_partial_text():
    turn = Turn("t")
    stream_text(turn, "run-1", "half an ans").on_custom_event(RETRY_EVENT, {}, run_id=uuid.uuid4())
    stream_text(turn, "run-1", "The answer.")

    assert [m["content"] for m in turn.snapshot()] == ["The answer."]


def test_a_finished_call_that_streamed_nothing_still_shows_its_text_once():
    turn = Turn("t")
    stream_text(turn, "run-1", "Streamed.")
    apply(turn, {"model": {"messages": [AIMessage("Streamed.", id="run-1")]}})
    apply(turn, {"model": {"messages": [AIMessage("Not streamed.", id="run-2")]}})

    assert [m["content"] for m in turn.snapshot()] == ["Streamed.", "Not streamed."]


def test_a_tool_card_starts_pending_and_ends_in_place_with_its_output():
    turn = Turn("t")
    call = say("Looking.", ("search_dashboards", "call_1", {"query": "sales"}))
    apply(turn, {"model": {"messages": [call]}})
    started = turn.snapshot()[1]["metadata"]
    assert turn.is_open("call_1")

    result = ToolMessage('{"items": [1]}', tool_call_id="call_1", name="search_dashboards")
    apply(turn, {"tools": {"messages": [result]}})

    assert started["type"] == "tool_start" and started["status"] == "pending"
    assert started["title"] == "Searching dashboards" and started["input"] == {"query": "sales"}
    (card,) = [m["metadata"] for m in turn.snapshot() if m["metadata"]]
    assert card["type"] == "tool_end" and card["status"] == "done"
    assert card["output"] == {"items": [1]} and card["call_id"] == "call_1"
    assert isinstance(card["duration_ms"], int) and not turn.is_open("call_1")
    assert kinds(turn) == ["text", "tool_end"]


def test_a_failed_call_ends_as_tool_error_with_its_code_or_a_generic_one():
    turn = Turn("t")
    apply(turn, {"model": {"messages": [say("", ("get_dashboard", "a", {}))]}})
    apply(turn, {"model": {"messages": [say("", ("get_dashboard", "b", {}))]}})
    coded = json.dumps({"error": {"code": "FORBIDDEN", "message": "no"}})
    apply(
        turn,
        {
            "tools": {
                "messages": [
                    ToolMessage(coded, tool_call_id="a", name="get_dashboard", status="error"),
                    ToolMessage(
                        "Traceback " * 100, tool_call_id="b", name="get_dashboard", status="error"
                    ),
                ]
            }
        },
    )

    first, second = (m["metadata"] for m in turn.snapshot())
    assert first["type"] == "tool_error" and first["error"] == {
        "code": "FORBIDDEN",
        "message": "no",
    }
    assert second["error"]["code"] == "TOOL_ERROR" and len(second["error"]["message"]) == 300


def test_a_confirm_tool_gets_no_running_card_and_its_rejection_reads_rejected():
    turn = Turn("t")
    apply(turn, {"model": {"messages": [say("", ("deploy_dashboard", "c", {}))]}})
    assert turn.snapshot() == []  # it waits for a person, it is not running

    rejected = ToolMessage(
        "rejected",
        tool_call_id="c",
        name="deploy_dashboard",
        status="error",
        additional_kwargs={"lc_source": "hitl_interrupt_decision"},
    )
    apply(turn, {"tools": {"messages": [rejected]}})

    (card,) = [m["metadata"] for m in turn.snapshot()]
    assert card["type"] == "tool_error" and card["error"]["code"] == "REJECTED"
    assert card["tool"] == "deploy_dashboard"  # the card is made from the call it answers


def test_an_interrupt_is_returned_as_pending_and_shown_as_a_confirm_card():
    turn = Turn("thread-9")
    pending = apply(turn, {"__interrupt__": [approval("c", dashboard_id=3)]})
    assert [p.call_id for p in pending] == ["c"]

    turn.confirm(pending[0])

    (message,) = turn.snapshot()
    assert message["content"] == "Deploy dashboard 3"
    assert message["metadata"]["type"] == "confirm_required"
    assert message["metadata"]["thread_id"] == "thread-9"
    assert message["metadata"]["call_id"] == "c"


def test_the_tool_call_budget_ends_the_turn_with_budget_exhausted():
    turn = Turn("t")
    end = AIMessage("x", response_metadata={TOOL_BUDGET_MARK: True})  # RunBudget's last message
    apply(turn, {"model": {"messages": [AIMessage("plain"), end]}})

    assert [m["metadata"].get("type", "text") for m in turn.snapshot()] == ["text", "error"]
    assert turn.snapshot()[1]["metadata"]["code"] == "BUDGET_EXHAUSTED"


def test_a_huge_output_is_shown_as_a_preview():
    turn = Turn("t")
    apply(turn, {"model": {"messages": [say("", ("read_file", "f", {}))]}})
    turn.tool_result(ToolMessage("z" * (MAX_OUTPUT_CHARS + 1), tool_call_id="f", name="read_file"))

    output = turn.snapshot()[0]["metadata"]["output"]
    assert output == {"truncated": True, "preview": "z" * MAX_OUTPUT_CHARS}


def test_the_record_keeps_the_text_of_plain_messages_and_every_part():
    turn = Turn("t")
    stream_text(turn, "r1", "First.")
    apply(turn, {"model": {"messages": [say("", ("list_tables", "l", {}))]}})
    stream_text(turn, "r2", "Second.")
    turn.notice("TRUNCATED", "Your message was cut.")

    content, metadata = turn.record()

    assert content == "First.\n\nSecond."
    assert [p["metadata"].get("type") for p in metadata["parts"]] == [
        None,
        "tool_start",
        None,
        "notice",
    ]


def test_once_identified_every_message_carries_the_message_id_and_snapshots_are_copies():
    turn = Turn("t")
    stream_text(turn, "r1", "Hi")
    before = turn.snapshot()
    turn.identify(42)
    after = turn.snapshot()
    after[0]["metadata"]["type"] = "changed by the receiver"

    assert "message_id" not in before[0]["metadata"]
    assert turn.snapshot()[0]["metadata"] == {"message_id": 42}
    assert turn.message_id == 42


def test_the_first_output_hooks_run_once():
    turn = Turn("t")
    calls: list[int] = []
    turn.on_first_output.append(lambda: calls.append(turn.version))
    stream_text(turn, "r", "a", "b")
    turn.notice("TRUNCATED", "cut")

    assert calls == [0]


async def test_updates_coalesce_text_but_show_a_card_at_once_and_always_the_last_state():
    turn = Turn("t")
    seen: list[list[str]] = []

    async def read() -> None:
        async for snap in updates(turn):
            seen.append([m["metadata"].get("type", m["content"]) for m in snap])

    reader = asyncio.create_task(read())
    stream_text(turn, "r", "a")
    await asyncio.sleep(0)  # the first text goes out at once
    for delta in "bcdefgh":
        stream_text(turn, "r", delta)  # within one interval: coalesced
    apply(turn, {"model": {"messages": [say("", ("list_tables", "l", {}))]}})
    await asyncio.sleep(0.01)
    turn.finish()
    await asyncio.wait_for(reader, 5)

    assert seen[0] == ["a"]
    assert ["abcdefgh", "tool_start"] in seen
    assert len(seen) <= 3  # not one snapshot per delta
    assert seen[-1] == ["abcdefgh", "tool_start"]


def test_a_pending_from_a_record_shows_the_same_card():
    pending = Pending("", "deploy_dashboard", "c", {"dashboard_id": 1}, "Deploy 1")
    turn = Turn("t")
    turn.confirm(pending)
    assert turn.snapshot()[0]["metadata"]["allowed"] == ["confirm", "reject"]
