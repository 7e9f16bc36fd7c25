"""The stream protocol: tokens, tool cards, notices and errors, through the real agent process."""

from __future__ import annotations

from tests.agent.support import (
    assert_valid_for_any_provider,
    collect,
    error_code,
    history,
    kinds,
    of_type,
    text_of,
)

ANSWER = "Dashboard 42 is healthy: all four charts validated without errors today."


def test_tokens_stream_as_several_events_that_grow_one_message(
    chat, tokens, conversation, fake_llm
):
    cid = conversation()
    fake_llm.enqueue({"text": ANSWER, "delay_ms": 60})

    outputs = chat.send(tokens["admin"], cid, "Is dashboard 42 healthy?")

    texts = [text_of(o) for o in outputs]
    assert len(outputs) >= 3
    assert all(kinds(o) == ["text"] for o in outputs)
    assert all(texts[i + 1].startswith(texts[i]) for i in range(len(texts) - 1))
    assert texts[0] != ANSWER and texts[-1] == ANSWER
    assert fake_llm.requests[0]["stream"] is True


def test_the_answer_and_the_question_are_persisted_in_the_history(
    chat, tokens, conversation, fake_llm, api
):
    cid = conversation()
    fake_llm.enqueue({"text": ANSWER})

    chat.send(tokens["admin"], cid, "Is dashboard 42 healthy?")

    items = history(api, tokens["admin"], cid)
    assert [(m["role"], m["content"]) for m in items] == [
        ("user", "Is dashboard 42 healthy?"),
        ("assistant", ANSWER),
    ]
    assert items[1]["metadata"]["parts"] == [
        {"role": "assistant", "content": ANSWER, "metadata": {}}
    ]


def test_a_tool_card_starts_pending_then_ends_in_place_with_its_output(
    chat, tokens, conversation, fake_llm
):
    cid = conversation()
    fake_llm.enqueue(
        {
            "text": "Let me look.",
            "tool_calls": [{"name": "get_dashboard", "args": {"dashboard_id": 42}}],
        },
        {"text": "It is the sales overview."},
    )

    outputs = chat.send(tokens["admin"], cid, "Show me dashboard 42")

    started = next(o for o in outputs if "tool_start" in kinds(o))
    card = of_type(started, "tool_start")[0]["metadata"]
    assert card["tool"] == "get_dashboard" and card["status"] == "pending"
    assert card["input"] == {"dashboard_id": 42} and card["title"]
    final = outputs[-1]
    assert kinds(final) == ["text", "tool_end", "text"]
    end = final[1]["metadata"]
    assert end["call_id"] == card["call_id"] and end["status"] == "done"
    assert end["output"]["id"] == 42 and end["duration_ms"] >= 0
    assert text_of(final) == "Let me look.It is the sales overview."


def test_a_failing_tool_ends_as_tool_error_with_a_stable_code_and_no_backend_body(
    chat, tokens, conversation, fake_llm
):
    cid = conversation()
    fake_llm.enqueue(
        {"tool_calls": [{"name": "get_dashboard", "args": {"dashboard_id": 987654}}]},
        {"text": "That dashboard does not exist."},
    )

    outputs = chat.send(tokens["admin"], cid, "Show me dashboard 987654")

    assert any("tool_start" in kinds(o) for o in outputs)
    error = of_type(outputs[-1], "tool_error")[0]["metadata"]
    assert error["status"] == "done" and error["error"]["code"] == "NOT_FOUND"
    assert "Traceback" not in error["error"]["message"] and "{" not in error["error"]["message"]
    tool_message = fake_llm.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool" and "NOT_FOUND" in tool_message["content"]


def test_an_unknown_tool_name_runs_nothing_and_is_reported_to_the_model(
    chat, tokens, conversation, fake_llm, sql
):
    cid = conversation()
    before = sql.execute("select count(*) from assistant_audit").fetchone()[0]
    fake_llm.enqueue(
        {"tool_calls": [{"name": "drop_all_dashboards", "args": {"confirm": True}}]},
        {"text": "I cannot do that."},
    )

    outputs = chat.send(tokens["admin"], cid, "Drop everything")

    error = of_type(outputs[-1], "tool_error")[0]["metadata"]
    assert error["error"]["code"] == "UNKNOWN_TOOL"
    actions = sql.execute(
        "select action from assistant_audit order by id offset %s", (before,)
    ).fetchall()
    assert all(a.startswith("conversation.") for (a,) in actions), actions
    assert "UNKNOWN_TOOL" in fake_llm.requests[1]["messages"][-1]["content"]


def test_a_message_over_the_limit_is_cut_at_a_sentence_with_a_truncated_notice(
    chat, tokens, conversation, fake_llm, api
):
    cid = conversation()
    sentence = "The revenue chart shows a dip in March. "
    long_text = sentence * (100_500 // len(sentence) + 1)
    fake_llm.enqueue({"text": "Noted."})

    outputs = chat.send(tokens["admin"], cid, long_text)

    notice = of_type(outputs[-1], "notice")[0]["metadata"]
    assert notice["code"] == "TRUNCATED"
    stored = history(api, tokens["admin"], cid)[0]
    assert len(stored["content"]) <= 100_000
    assert stored["content"].endswith("March. [...truncated]")


def test_bad_inputs_get_invalid_input_before_any_model_call(chat, tokens, conversation, fake_llm):
    cid = conversation()

    assert error_code(chat.send(tokens["admin"], "not-a-uuid", "hello")) == "INVALID_INPUT"
    assert error_code(chat.send(tokens["admin"], cid, "hello", action="approve")) == "INVALID_INPUT"
    assert error_code(chat.send(tokens["admin"], cid, "   ")) == "INVALID_INPUT"
    assert fake_llm.requests == []


def test_a_server_error_is_retried_once_and_the_answer_still_arrives(
    chat, tokens, conversation, fake_llm
):
    cid = conversation()
    fake_llm.enqueue({"status": 500}, {"text": "Recovered answer."})

    outputs = chat.send(tokens["admin"], cid, "hello")

    assert kinds(outputs[-1]) == ["text"] and text_of(outputs[-1]) == "Recovered answer."
    assert len(fake_llm.requests) == 2


def test_two_server_errors_end_the_turn_with_llm_error_and_the_next_turn_works(
    chat, tokens, conversation, fake_llm
):
    cid = conversation()
    fake_llm.enqueue({"status": 500}, {"status": 503})

    assert error_code(chat.send(tokens["admin"], cid, "hello")) == "LLM_ERROR"

    fake_llm.enqueue({"text": "Back again."})
    assert text_of(chat.send(tokens["admin"], cid, "hello again")[-1]) == "Back again."


def test_a_timeout_is_retried_once(chat, tokens, conversation, fake_llm):
    cid = conversation()
    fake_llm.enqueue({"hang_s": 10}, {"text": "Sorry for the wait."})

    outputs = chat.send(tokens["admin"], cid, "hello")

    assert text_of(outputs[-1]) == "Sorry for the wait."


def test_a_malformed_tool_call_is_retried_and_its_text_is_dropped(
    chat, tokens, conversation, fake_llm
):
    cid = conversation()
    bad = {"name": "get_dashboard", "raw_args": "dashboard_id=42"}
    fake_llm.enqueue({"text": "Checking now.", "tool_calls": [bad]}, {"text": "Clean answer."})

    outputs = chat.send(tokens["admin"], cid, "Show 42")

    assert kinds(outputs[-1]) == ["text"] and text_of(outputs[-1]) == "Clean answer."


def test_malformed_tool_calls_twice_end_with_llm_error(chat, tokens, conversation, fake_llm):
    cid = conversation()
    bad = {"name": "get_dashboard", "raw_args": "{{{"}
    fake_llm.enqueue({"tool_calls": [bad]}, {"tool_calls": [bad]})

    assert error_code(chat.send(tokens["admin"], cid, "Show 42")) == "LLM_ERROR"


def test_a_model_that_never_stops_calling_tools_hits_budget_exhausted(
    chat, tokens, conversation, fake_llm
):
    cid = conversation()
    fake_llm.script.load(
        {"default": {"tool_calls": [{"name": "search_dashboards", "args": {"query": "sales"}}]}}
    )

    outputs = chat.send(tokens["admin"], cid, "Search forever")

    assert error_code(outputs) == "BUDGET_EXHAUSTED"
    assert len(fake_llm.requests) == 6  # AGENT__MAX_MODEL_CALLS in the test environment
    fake_llm.reset()
    fake_llm.enqueue({"text": "Fine now."})
    assert text_of(chat.send(tokens["admin"], cid, "stop")[-1]) == "Fine now."
    assert_valid_for_any_provider(fake_llm.requests[-1])


def test_too_many_tool_calls_in_one_turn_hit_budget_exhausted_and_run_none(
    chat, tokens, conversation, fake_llm
):
    cid = conversation()
    calls = [{"name": "get_dashboard", "args": {"dashboard_id": 42}} for _ in range(9)]
    fake_llm.enqueue({"tool_calls": calls})

    outputs = chat.send(tokens["admin"], cid, "Look nine times")

    final = outputs[-1]
    assert error_code(outputs) == "BUDGET_EXHAUSTED"
    assert len(of_type(final, "tool_error")) == 9 and not of_type(final, "tool_end")


def test_the_chat_endpoint_takes_message_conversation_id_action_and_optional_focus_and_options(
    chat, tokens, conversation, fake_llm
):
    api = chat.client(tokens["admin"]).view_api(return_format="dict", print_info=False)
    params = api["named_endpoints"]["/chat"]["parameters"]
    names = [p["parameter_name"] for p in params]
    assert names == ["message", "conversation_id", "action", "focus", "options"]
    for optional in params[3:]:
        assert optional["parameter_has_default"] and optional["parameter_default"] == ""
    cid = conversation()
    fake_llm.enqueue({"text": "Plain call works."})

    job = chat.client(tokens["admin"]).submit(
        message={"text": "hi", "files": []}, conversation_id=cid, action="", api_name="/chat"
    )

    assert text_of(collect(job)[-1]) == "Plain call works."


def test_the_focus_tells_the_model_what_the_person_is_looking_at(
    chat, tokens, conversation, fake_llm
):
    cid = conversation()
    fake_llm.enqueue({"text": "You are looking at dashboard 42."})

    chat.send(tokens["admin"], cid, "What am I looking at?", focus='{"dashboard_id": 42}')

    system = fake_llm.requests[-1]["messages"][0]["content"]
    assert '"dashboard_id": 42' in system and "roles: admin" in system
    assert error_code(chat.send(tokens["admin"], cid, "x", focus="[1, 2]")) == "INVALID_INPUT"


def test_a_stream_that_stalls_midway_is_retried_and_its_partial_text_is_dropped(
    chat, tokens, conversation, fake_llm
):
    cid = conversation()
    fake_llm.enqueue(
        {"text": "Stale words that never finish", "hang_after_tokens": 2},
        {"text": "Fresh answer."},
    )

    outputs = chat.send(tokens["admin"], cid, "hello")

    assert any(text_of(o).startswith("Stale") for o in outputs)
    assert kinds(outputs[-1]) == ["text"] and text_of(outputs[-1]) == "Fresh answer."
