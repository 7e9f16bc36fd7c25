"""The demo model on requests people actually type: several steps in one message, typos and
other verbs, names of files and prefixes, what an earlier answer said, and what it refuses."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from agent.demo.model import DemoChatModel

ROUTES: list[tuple[str, str, dict[str, Any]]] = [
    ("dash 64 - what charts does it have", "get_dashboard", {"dashboard_id": 64}),
    ("what's wrong with dashbaord 17", "dashboard_health", {"dashboard_id": 17}),
    ("дашборд 29 в порядке?", "dashboard_health", {"dashboard_id": 29}),
    ("what SQL does the revenue chart on dashboard 42 run?", "get_dashboard", {"dashboard_id": 42}),
    (
        "redeploy main of dashboard 23 to prod",
        "deploy_dashboard",
        {"dashboard_id": 23, "ref": "main", "environment": "production"},
    ),
    (
        "push main of dashboard 5 to staging",
        "deploy_dashboard",
        {"dashboard_id": 5, "ref": "main", "environment": "staging"},
    ),
    (
        "накати 20261115_orders_order_date_index на sample",
        "execute_migration",
        {"datasource": "sample", "migration_id": "20261115_orders_order_date_index"},
    ),
    ("any failed deployments in the logs this week?", "query_logs", {}),
    ("логи по миграциям", "query_logs", {}),
    ("были таймауты запросов? глянь логи", "query_logs", {}),
    ("which datasources can I query?", "list_tables", {}),
    ("describe the orders table in sample", "get_table_schema", {"table_ref": "sample.orders"}),
    (
        "какого типа поле occurred_at в sample.events?",
        "get_table_schema",
        {"table_ref": "sample.events"},
    ),
    (
        "count the rows of the customers table in sample",
        "execute_sql",
        {"datasource": "sample", "query": "SELECT COUNT(*) AS row_count FROM customers"},
    ),
    ("list everything under exports/", "list_files", {"prefix": "exports/"}),
    ("what's in storage under images/?", "list_files", {"prefix": "images/"}),
    ("open configs/dashboard_17.json", "read_file", {"key": "configs/dashboard_17.json"}),
    (
        "поищи в базе знаний про роли",
        "lookup_knowledge",
        {"query": "поищи в базе знаний про роли"},
    ),
]


def call_of(message: BaseMessage) -> tuple[str, dict[str, Any]]:
    assert isinstance(message, AIMessage) and len(message.tool_calls) == 1, message
    return message.tool_calls[0]["name"], message.tool_calls[0]["args"]


def result_of(call: AIMessage, body: dict[str, Any], *, failed: bool = False) -> ToolMessage:
    first = call.tool_calls[0]
    return ToolMessage(
        json.dumps(body),
        tool_call_id=first["id"],
        name=first["name"],
        status="error" if failed else "success",
    )


@pytest.mark.parametrize(("prompt", "tool", "args"), ROUTES)
def test_more_ways_of_asking_route_to_the_expected_tool(
    prompt: str, tool: str, args: dict[str, Any]
) -> None:
    assert call_of(DemoChatModel().invoke([HumanMessage(prompt)])) == (tool, args)


def test_a_request_of_two_steps_runs_them_in_order_and_the_second_uses_the_first() -> None:
    model = DemoChatModel()
    messages: list[BaseMessage] = [
        HumanMessage("создай ветку hotfix для дашборда 23 и задеплой её на стейджинг")
    ]
    first = model.invoke(messages)
    assert call_of(first)[0] == "create_branch" and call_of(first)[1]["dashboard_id"] == 23
    branch = {"id": 31, "name": "hotfix-23", "dashboard_id": 23}
    messages += [first, result_of(first, branch)]

    second = model.invoke(messages)

    assert call_of(second) == (
        "deploy_dashboard",
        {"dashboard_id": 23, "ref": "hotfix-23", "environment": "staging"},
    )
    deployed = {"id": 5, "dashboard_id": 23, "ref": "hotfix-23", "environment": "staging"}
    summary = model.invoke([*messages, second, result_of(second, deployed)])
    assert not summary.tool_calls
    assert "Создана ветка «hotfix-23» (id 31)" in str(summary.content)
    assert "развёрнут в staging" in str(summary.content)


def test_a_failed_step_stops_the_request_there() -> None:
    model = DemoChatModel()
    messages: list[BaseMessage] = [
        HumanMessage("show error logs for dashboard 17 and check its health")
    ]
    first = model.invoke(messages)
    assert call_of(first) == ("query_logs", {"level": "error", "dashboard_id": 17})
    error = {"error": {"code": "BACKEND_UNAVAILABLE", "message": "down"}}

    answer = model.invoke([*messages, first, result_of(first, error, failed=True)])

    assert not answer.tool_calls and "query_logs failed" in str(answer.content)


@pytest.mark.parametrize(
    ("prompt", "tool"),
    [
        ("check the health of dashboards 42 and 58", "dashboard_health"),  # one tool: one step
        ("search dashboards about sales and marketing", "search_dashboards"),  # no 2nd job
        ("sql: select id from orders where status = 'a' and id > 5", "execute_sql"),  # SQL
    ],
)
def test_and_inside_one_request_does_not_make_two_steps(prompt: str, tool: str) -> None:
    model = DemoChatModel()
    first = model.invoke([HumanMessage(prompt)])
    assert call_of(first)[0] == tool

    answer = model.invoke([HumanMessage(prompt), first, result_of(first, {"items": []})])

    assert not answer.tool_calls


def test_a_branch_or_migration_named_in_an_earlier_answer_is_what_it_and_this_refer_to() -> None:
    model = DemoChatModel()
    branch = [
        HumanMessage("create a branch fix-stock for dashboard 23"),
        AIMessage('[demo model] Created branch "fix-stock" (id 14) of dashboard #23.'),
        HumanMessage('commit "remove trend" to that branch'),
    ]
    name, args = call_of(model.invoke(branch))
    assert name == "commit_changes" and args["branch_id"] == 14
    migration = [
        HumanMessage("почему падает дашборд 23?"),
        AIMessage("Миграция 20261101_inventory_snapshots на sample не применена."),
        HumanMessage("ок, примени эту миграцию"),
    ]
    assert call_of(model.invoke(migration)) == (
        "execute_migration",
        {"datasource": "sample", "migration_id": "20261101_inventory_snapshots"},
    )


@pytest.mark.parametrize(
    ("prompt", "words"),
    [
        ("what's the JWT secret the backend uses?", "can't show passwords"),
        ("скинь пароль админа", "Пароли, ключи и токены"),
        ("drop table orders on sample", "no tool here does that"),
        ("удали дашборд 8", "такого инструмента нет"),
    ],
)
def test_secrets_and_deletes_are_refused_without_a_tool(prompt: str, words: str) -> None:
    answer = DemoChatModel().invoke([HumanMessage(prompt)])

    assert not answer.tool_calls and words in str(answer.content)


@pytest.mark.parametrize(
    ("prompt", "tool"),
    [
        ("why did revenue drop on dashboard 42?", "dashboard_health"),
        ("run some sql for me", None),  # asked for the query itself
    ],
)
def test_words_near_a_refusal_or_a_query_keep_their_ordinary_meaning(
    prompt: str, tool: str | None
) -> None:
    answer = DemoChatModel().invoke([HumanMessage(prompt)])

    if tool is None:
        assert not answer.tool_calls and "Send the query itself" in str(answer.content)
    else:
        assert call_of(answer)[0] == tool


def test_removing_a_chart_with_a_commit_is_still_a_commit() -> None:
    prompt = "закоммить в ветку 9: удалить график chargebacks, сообщение «убрать chargebacks»"
    name, args = call_of(DemoChatModel().invoke([HumanMessage(prompt)]))
    assert name == "commit_changes" and args["branch_id"] == 9
