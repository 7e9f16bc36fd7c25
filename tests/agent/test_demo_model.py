# ruff: noqa: RUF001  (Russian prompts are intended)
"""The offline demo model: Russian and English requests routed to the right tools, "it" resolved
across turns, summaries of tool results, streamed chunks, and one real flow inside create_agent
with the real tools against the real backend."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from agent.backend_client import BackendClient
from agent.context import Context
from agent.demo.model import DemoChatModel
from agent.prompts import focus_note
from agent.tools.registry import build_tools
from tests.agent import _tools_fixtures as fixtures

# Fixtures shared with the other agent tool tests.
backend_client = fixtures.backend_client
contexts = fixtures.contexts
recorder = fixtures.recorder


ROUTES: list[tuple[str, str, dict[str, Any]]] = [
    ("show dashboards with validation problems", "search_dashboards", {"status": "failing"}),
    ("покажи дашборды с проблемами валидации", "search_dashboards", {"status": "failing"}),
    ("покажи дашборды", "search_dashboards", {}),
    ("search dashboards about revenue", "search_dashboards", {"query": "revenue"}),
    ("dashboard 42", "get_dashboard", {"dashboard_id": 42}),
    ("дашборд 42", "get_dashboard", {"dashboard_id": 42}),
    ("why is dashboard 17 failing?", "dashboard_health", {"dashboard_id": 17}),
    ("почему дашборд 23 падает?", "dashboard_health", {"dashboard_id": 23}),
    (
        "create a branch for dashboard 42 named fix-q3",
        "create_branch",
        {"dashboard_id": 42, "name": "fix-q3"},
    ),
    (
        "deploy dashboard 42 to production",
        "deploy_dashboard",
        {"dashboard_id": 42, "ref": "main", "environment": "production"},
    ),
    (
        "задеплой дашборд 42 на стейджинг",
        "deploy_dashboard",
        {"dashboard_id": 42, "ref": "main", "environment": "staging"},
    ),
    (
        "apply migration 20261101_inventory_snapshots on sample",
        "execute_migration",
        {"datasource": "sample", "migration_id": "20261101_inventory_snapshots"},
    ),
    (
        "примени миграцию 20261115_orders_order_date_index",
        "execute_migration",
        {"datasource": "sample", "migration_id": "20261115_orders_order_date_index"},
    ),
    ("list tables in sample", "list_tables", {"datasource": "sample"}),
    ("какие есть таблицы?", "list_tables", {}),
    ("columns of sample.orders", "get_table_schema", {"table_ref": "sample.orders"}),
    (
        "sql: select count(*) from orders",
        "execute_sql",
        {"datasource": "sample", "query": "select count(*) from orders"},
    ),
    ("list files under reports/", "list_files", {"prefix": "reports/"}),
    ("прочитай файл reports/q3.csv", "read_file", {"key": "reports/q3.csv"}),
    ("show error logs for dashboard 17", "query_logs", {"level": "error", "dashboard_id": 17}),
    ("покажи логи ошибок", "query_logs", {"level": "error"}),
    ("how do I deploy a dashboard?", "lookup_knowledge", {"query": "how do I deploy a dashboard?"}),
    ("что такое валидация?", "lookup_knowledge", {"query": "что такое валидация?"}),
]


def call_of(message: BaseMessage) -> tuple[str, dict[str, Any]]:
    assert isinstance(message, AIMessage) and len(message.tool_calls) == 1, message
    call = message.tool_calls[0]
    assert re.fullmatch(r"call_[0-9a-f]{24}", call["id"] or "")
    return call["name"], call["args"]


def answered(history: list[BaseMessage], name: str, body: dict[str, Any]) -> list[BaseMessage]:
    """`history` plus the model's call of `name` and a tool result `body` for it."""
    model = DemoChatModel()
    message = model.invoke(history)
    assert call_of(message)[0] == name
    call_id = message.tool_calls[0]["id"]
    result = ToolMessage(json.dumps(body), tool_call_id=call_id, name=name)
    return [*history, message, result, model.invoke([*history, message, result])]


@pytest.mark.parametrize(("prompt", "tool", "args"), ROUTES)
def test_common_requests_route_to_the_expected_tool_and_arguments(
    prompt: str, tool: str, args: dict[str, Any]
) -> None:
    assert call_of(DemoChatModel().invoke([HumanMessage(prompt)])) == (tool, args)


def test_it_resolves_to_the_last_dashboard_of_the_conversation_in_english_and_russian() -> None:
    model = DemoChatModel()
    history = answered([HumanMessage("dashboard 17")], "get_dashboard", {"id": 17})
    name, args = call_of(model.invoke([*history, HumanMessage("create a branch for it")]))
    assert name == "create_branch" and args["dashboard_id"] == 17
    assert re.fullmatch(r"demo-17-[0-9a-f]{6}", args["name"])
    follow = [*history, HumanMessage("а почему он падает?")]
    assert call_of(model.invoke(follow)) == ("dashboard_health", {"dashboard_id": 17})


def test_the_dashboard_open_in_the_browser_is_what_this_and_it_refer_to() -> None:
    model = DemoChatModel()
    system = SystemMessage("You are the assistant." + focus_note({"kind": "dashboard", "id": 17}))
    why = call_of(model.invoke([system, HumanMessage("why is this dashboard failing?")]))
    assert why == ("dashboard_health", {"dashboard_id": 17})
    name, args = call_of(model.invoke([system, HumanMessage("create a branch for it")]))
    assert name == "create_branch" and args["dashboard_id"] == 17
    # "this dashboard" means the open one even when the conversation talked about another.
    history = answered([system, HumanMessage("dashboard 42")], "get_dashboard", {"id": 42})
    here = call_of(model.invoke([*history, HumanMessage("почему этот дашборд падает?")]))
    assert here == ("dashboard_health", {"dashboard_id": 17})
    # Without a focus line nothing is guessed.
    assert not model.invoke([HumanMessage("deploy it to production")]).tool_calls


def test_deploy_after_a_branch_deploys_that_branch_and_commit_targets_it() -> None:
    model = DemoChatModel()
    start: list[BaseMessage] = [HumanMessage("create a branch for dashboard 42 named fix-1")]
    history = answered(start, "create_branch", {"id": 9, "name": "fix-1", "dashboard_id": 42})
    deploy = call_of(model.invoke([*history, HumanMessage("задеплой его в прод")]))
    assert deploy == (
        "deploy_dashboard",
        {"dashboard_id": 42, "ref": "fix-1", "environment": "production"},
    )
    name, args = call_of(model.invoke([*history, HumanMessage('commit "Add KPI"')]))
    assert name == "commit_changes" and args["branch_id"] == 9 and args["message"] == "Add KPI"
    assert args["changes"][0]["op"] == "add"


def test_a_missing_dashboard_gets_a_question_and_an_unknown_request_gets_help() -> None:
    model = DemoChatModel()
    asked = model.invoke([HumanMessage("create a branch")])
    assert not asked.tool_calls and "Which dashboard" in str(asked.content)
    # Help names dashboards that exist: it asks the tools which first.
    body = {"total": 1, "items": [{"id": 3, "title": "Revenue daily", "status": "ok"}]}
    helped = answered([HumanMessage("привет")], "search_dashboards", body)[-1]
    assert str(helped.content).startswith("[demo model] Я встроенная офлайн-демо-модель")
    assert "«задеплой Revenue daily в прод»" in str(helped.content)
    assert "42" not in str(helped.content) and "sample" not in str(helped.content)
    # With no tools bound (plain chat) the help is given at once, naming no dashboard.
    plain = DemoChatModel(tool_names=()).invoke([HumanMessage("hello")])
    assert not plain.tool_calls and "dashboard <title>" in str(plain.content)


def test_tool_results_are_summarised_in_the_language_of_the_request() -> None:
    body = {
        "total": 2,
        "items": [
            {"id": 17, "title": "Marketing funnel", "status": "failing"},
            {"id": 23, "title": "Inventory health", "status": "failing"},
        ],
    }
    english = answered([HumanMessage("dashboards with problems")], "search_dashboards", body)
    assert english[-1].content == (
        "[demo model] Found 2 dashboard(s):\n"
        "- Marketing funnel (id 17) — failing\n- Inventory health (id 23) — failing"
    )
    russian = answered([HumanMessage("дашборды с проблемами")], "search_dashboards", body)
    assert str(russian[-1].content).startswith("[demo model] Найдено дашбордов: 2.")
    assert "- Marketing funnel (id 17) — ошибка" in str(russian[-1].content)  # status words too
    assert not english[-1].tool_calls and not russian[-1].tool_calls  # type: ignore[attr-defined]


def test_a_failed_tool_is_summarised_with_its_code_not_retried() -> None:
    request = HumanMessage("deploy dashboard 42 to production")
    call = DemoChatModel().invoke([request])
    error = {"error": {"code": "FORBIDDEN", "message": "Requires role admin"}}
    failed = ToolMessage(
        json.dumps(error),
        tool_call_id=call.tool_calls[0]["id"],
        name="deploy_dashboard",
        status="error",
    )
    answer = DemoChatModel().invoke([request, call, failed])
    assert not answer.tool_calls
    assert answer.content == (
        "[demo model] deploy_dashboard failed (FORBIDDEN: Requires role admin)."
    )


DASHBOARDS = {
    "total": 2,
    "items": [
        {"id": 2, "title": "Orders overview", "status": "failing"},
        {"id": 3, "title": "Revenue daily", "status": "ok"},
    ],
}


def _result(call: AIMessage, body: dict[str, Any], *, failed: bool = False) -> ToolMessage:
    name = call.tool_calls[0]["name"]
    status = "error" if failed else "success"
    return ToolMessage(
        json.dumps(body), tool_call_id=call.tool_calls[0]["id"], name=name, status=status
    )


@pytest.mark.parametrize(
    ("prompt", "words", "tool", "args"),
    [
        (
            "Why is Orders overview failing?",
            "Orders overview",
            "dashboard_health",
            {"dashboard_id": 2},
        ),
        (
            "Почему падает Orders overview?",
            "Orders overview",
            "dashboard_health",
            {"dashboard_id": 2},
        ),
        (
            "Deploy Revenue daily to production",
            "Revenue daily",
            "deploy_dashboard",
            {"dashboard_id": 3, "ref": "main", "environment": "production"},
        ),
        (
            "Задеплой Revenue daily в прод",
            "Revenue daily",
            "deploy_dashboard",
            {"dashboard_id": 3, "ref": "main", "environment": "production"},
        ),
        (
            "what charts are on the Revenue daily dashboard?",
            "Revenue daily",
            "get_dashboard",
            {"dashboard_id": 3},
        ),
    ],
)
def test_a_dashboard_named_by_its_title_is_found_with_the_search_tool_then_acted_on(
    prompt: str, words: str, tool: str, args: dict[str, Any]
) -> None:
    model = DemoChatModel()
    # A dashboard open beside the chat does not stand in for the one named.
    system = SystemMessage("You are the assistant." + focus_note({"kind": "dashboard", "id": 9}))
    messages: list[BaseMessage] = [system, HumanMessage(prompt)]
    search = model.invoke(messages)
    assert call_of(search) == ("search_dashboards", {"query": words})
    messages += [search, _result(search, DASHBOARDS)]
    acted = model.invoke(messages)
    assert call_of(acted) == (tool, args)
    found = args["dashboard_id"]
    title = next(i["title"] for i in DASHBOARDS["items"] if i["id"] == found)
    body = {"id": found, "dashboard_id": found, "title": title, "status": "ok", "latest_run": None}
    answer = str(model.invoke([*messages, acted, _result(acted, body)]).content)
    assert title in answer and f"(id {found}" in answer and "Found" not in answer


def test_a_title_no_dashboard_has_is_said_in_the_persons_language() -> None:
    model = DemoChatModel()
    messages: list[BaseMessage] = [HumanMessage("Почему падает Churn radar?")]
    search = model.invoke(messages)
    assert call_of(search) == ("search_dashboards", {"query": "Churn radar"})
    answer = model.invoke([*messages, search, _result(search, {"total": 0, "items": []})])
    assert not answer.tool_calls and "Дашборда с названием «Churn radar» не нашлось" in str(
        answer.content
    )


@pytest.mark.parametrize("prompt", ["why is this failing?", "почему это падает?"])
def test_this_is_the_page_in_focus(prompt: str) -> None:
    system = SystemMessage("You are the assistant." + focus_note({"kind": "dashboard", "id": 2}))
    routed = DemoChatModel().invoke([system, HumanMessage(prompt)])
    assert call_of(routed) == ("dashboard_health", {"dashboard_id": 2})


def test_a_refused_deploy_is_told_in_russian_in_a_russian_answer() -> None:
    model = DemoChatModel()
    messages: list[BaseMessage] = [HumanMessage("задеплой дашборд 3 в прод")]
    call = model.invoke(messages)
    error = {"error": {"code": "VALIDATION_FAILED", "message": "Version 7 fails validation"}}
    answer = str(model.invoke([*messages, call, _result(call, error, failed=True)]).content)
    assert "не проходит проверку" in answer and "fails validation" not in answer


def test_text_streams_in_several_chunks_that_add_up_to_the_answer() -> None:
    model = DemoChatModel(tool_names=())
    chunks = [c for c in model.stream([HumanMessage("hello")]) if c.content]
    assert len(chunks) > 5
    assert "".join(str(c.content) for c in chunks) == model.invoke([HumanMessage("hello")]).content


async def test_a_streamed_tool_call_arrives_as_chunks_that_merge_into_one_call() -> None:
    chunks = [c async for c in DemoChatModel().astream([HumanMessage("dashboard 42")])]
    assert sum(1 for c in chunks if c.tool_call_chunks) == 2
    merged: AIMessageChunk = chunks[0]
    for chunk in chunks[1:]:
        merged = merged + chunk
    assert call_of(merged) == ("get_dashboard", {"dashboard_id": 42})
    assert merged.usage_metadata and merged.usage_metadata["output_tokens"] > 0


def test_bound_tools_limit_what_the_model_calls() -> None:
    model = DemoChatModel()
    assert model._llm_type == "agent-chat-demo"
    only_search = model.bind_tools(
        [{"type": "function", "function": {"name": "search_dashboards", "parameters": {}}}]
    )
    answer = only_search.invoke([HumanMessage("dashboard 42")])
    assert not answer.tool_calls and str(answer.content).startswith("[demo model]")


async def test_inside_create_agent_the_demo_model_searches_the_real_backend_and_summarises(
    backend_client: BackendClient, contexts: dict[str, Context]
) -> None:
    agent = create_agent(
        model=DemoChatModel(), tools=build_tools(backend_client), context_schema=Context
    )
    prompt = HumanMessage("покажи дашборды с проблемами валидации")
    result = await agent.ainvoke({"messages": [prompt]}, context=contexts["viewer"])
    messages = result["messages"]
    assert [type(m).__name__ for m in messages] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "AIMessage",
    ]
    found = {item["id"] for item in json.loads(messages[2].content)["items"]}
    assert {17, 23} <= found
    answer = str(messages[-1].content)
    assert answer.startswith("[demo model] Найдено дашбордов")
    assert "(id 17)" in answer and "(id 23)" in answer


def test_a_rejected_confirmation_is_acknowledged_without_another_call() -> None:
    request = HumanMessage("задеплой дашборд 42 в прод")
    call = DemoChatModel().invoke([request])
    rejected = ToolMessage(
        "User rejected the tool call for `deploy_dashboard` with id x.",
        tool_call_id=call.tool_calls[0]["id"],
        name="deploy_dashboard",
        status="error",
    )
    answer = DemoChatModel().invoke([request, call, rejected])
    assert not answer.tool_calls
    assert answer.content == "[demo model] Вы отклонили deploy_dashboard, ничего не изменено."


def chart_of(answer: str) -> dict[str, Any]:
    """The JSON of the one ```chart block of an answer."""
    blocks = re.findall(r"```chart\n(.*?)\n```", answer, re.S)
    assert len(blocks) == 1, answer
    return dict(json.loads(blocks[0]))


@pytest.mark.parametrize(
    "prompt", ["show revenue by month as a chart", "покажи выручку по месяцам графиком"]
)
def test_a_chart_request_runs_a_query_on_the_sample_datasource(prompt: str) -> None:
    name, args = call_of(DemoChatModel().invoke([HumanMessage(prompt)]))
    assert name == "execute_sql" and args["datasource"] == "sample"
    assert "order_date" in args["query"] and "GROUP BY month" in args["query"]


def test_a_chart_question_about_a_named_dashboard_is_not_a_query() -> None:
    asked = DemoChatModel().invoke(
        [HumanMessage("why is the revenue by month chart on dashboard 42 failing?")]
    )
    assert call_of(asked) == ("dashboard_health", {"dashboard_id": 42})


def test_a_sql_result_is_summarised_as_a_markdown_table_not_python_lists() -> None:
    body = {"columns": ["status", "orders"], "rows": [["paid", 7], ["new|ish", 2]], "row_count": 2}
    history = answered(
        [HumanMessage("sql: select status, count(*) from orders")], "execute_sql", body
    )
    assert history[-1].content == (
        "[demo model] The query returned 2 row(s).\n\n"
        "| status | orders |\n|---|---|\n| paid | 7 |\n| new\\|ish | 2 |"
    )


async def test_inside_create_agent_a_chart_answer_is_drawn_from_the_real_rows(
    backend_client: BackendClient, contexts: dict[str, Context]
) -> None:
    agent = create_agent(
        model=DemoChatModel(), tools=build_tools(backend_client), context_schema=Context
    )
    for prompt, title in [
        ("show revenue by month as a chart", "Revenue by month"),
        ("покажи выручку по месяцам графиком", "Выручка по месяцам"),
    ]:
        result = await agent.ainvoke(
            {"messages": [HumanMessage(prompt)]}, context=contexts["viewer"]
        )
        tool = json.loads(result["messages"][2].content)
        spec = chart_of(str(result["messages"][-1].content))
        assert spec == {
            "kind": "line",
            "title": title,
            "columns": ["month", "revenue"],
            "rows": tool["rows"],
        }
        assert len(spec["rows"]) > 1 and all(isinstance(r[1], int | float) for r in spec["rows"])
