"""Fitting the model's input to its token budget (agent/trim.py): whole turns go, oldest first,
a tool call never loses its result, and a turn too long alone is shortened, marked."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from agent.trim import MIN_KEEP_CHARS, TRUNCATION_MARK, fit_to_budget, message_tokens, paired
from tests.agent.unit.scripted import say


def turn(n: int, words: int = 50) -> list:
    return [HumanMessage(f"question {n} " + "w " * words), AIMessage(f"answer {n} " + "w " * words)]


def test_what_fits_is_sent_unchanged():
    messages = turn(1) + turn(2)
    assert fit_to_budget(messages, 10_000) is messages


def test_older_turns_are_dropped_whole_and_the_input_starts_on_a_persons_message():
    messages = turn(1) + turn(2) + turn(3) + turn(4)
    budget = message_tokens(turn(3) + turn(4)) + 10

    kept = fit_to_budget(messages, budget)

    assert kept == turn(3) + turn(4)
    assert message_tokens(kept) <= budget


def test_a_tool_call_and_its_result_stay_together():
    tool_turn = [
        HumanMessage("list dashboards"),
        say("", ("search_dashboards", "call_1", {})),
        ToolMessage("r " * 40, tool_call_id="call_1", name="search_dashboards"),
        AIMessage("Here they are."),
    ]
    messages = turn(1, words=400) + tool_turn
    budget = message_tokens(tool_turn) + 5

    kept = fit_to_budget(messages, budget)

    assert kept == tool_turn
    ids = {c["id"] for m in kept if isinstance(m, AIMessage) for c in m.tool_calls}
    assert ids == {m.tool_call_id for m in kept if isinstance(m, ToolMessage)}


def test_a_current_turn_too_long_alone_is_kept_and_its_longest_text_shortened():
    long = "x" * 8_000
    messages = [*turn(1), HumanMessage(long)]

    kept = fit_to_budget(messages, 500)

    assert len(kept) == 1 and isinstance(kept[0], HumanMessage)
    text = str(kept[0].content)
    assert text.endswith(TRUNCATION_MARK) and text.startswith("x" * MIN_KEEP_CHARS)
    assert message_tokens(kept) <= 500
    assert messages[-1].content == long  # the stored message is untouched


def test_shortening_stops_at_the_floor_when_the_budget_cannot_be_met():
    messages = [SystemMessage("s" * 300), HumanMessage("h" * 300)]

    kept = fit_to_budget(messages, 10)

    assert all(len(str(m.content)) >= MIN_KEEP_CHARS for m in kept)
    assert any(str(m.content).endswith(TRUNCATION_MARK) for m in kept)


def test_a_long_conversation_is_cut_as_the_library_cuts_it_whole():
    # fit_to_budget counts from the end only as far as the budget reaches; the result must be
    # what trimming the whole list gives.
    from langchain_core.messages import trim_messages
    from langchain_core.messages.utils import count_tokens_approximately

    tool_turn = [
        HumanMessage("list dashboards"),
        say("", ("search_dashboards", "call_1", {})),
        ToolMessage("r " * 40, tool_call_id="call_1", name="search_dashboards"),
        AIMessage("Here they are."),
    ]
    messages = [m for n in range(300) for m in (turn(n, words=n % 90) + tool_turn)]
    for budget in (300, 1000, 4000):
        whole = trim_messages(
            messages,
            max_tokens=budget,
            token_counter=count_tokens_approximately,
            strategy="last",
            start_on="human",
            allow_partial=False,
        )
        assert fit_to_budget(messages, budget) == whole and whole


def test_a_thread_in_call_order_is_sent_as_it_is():
    thread = [
        HumanMessage("go"),
        say("", ("search_dashboards", "call_a", {}), ("get_dashboard", "call_b", {})),
        ToolMessage("{}", tool_call_id="call_a"),
        ToolMessage("{}", tool_call_id="call_b"),
        AIMessage("done"),
    ]
    assert paired(thread) is thread


def test_a_result_added_after_newer_messages_is_sent_next_to_its_call():
    call = say("", ("get_dashboard", "call_x", {}))
    late = ToolMessage('{"error": "cancelled"}', tool_call_id="call_x")
    stray = ToolMessage("{}", tool_call_id="call_nobody_made")
    thread = [HumanMessage("1"), call, HumanMessage("2"), AIMessage("Here."), late, stray]

    sent = paired(thread)

    assert sent == [HumanMessage("1"), call, late, HumanMessage("2"), AIMessage("Here.")]
