"""Mode `none` (one streamed answer, no tools offered) and the resources picked in the panel
(`options.resources`): read through the backend as the user, bounded, in the model's context
for that message, recorded on the history row; a bad key is refused and never read."""

from __future__ import annotations

import json
from typing import Any

from tests.agent.support import history, kinds, of_type, text_of
from tests.conftest import bearer

CSV_KEY = "exports/sales_2026_10.csv"
TRAVERSAL = "exports/../../../etc/passwd"


def user_text(request: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content")) for m in request["messages"] if m["role"] == "user")


def test_mode_none_offers_no_tools_and_streams_one_answer(chat, tokens, conversation, fake_llm):
    cid = conversation()
    fake_llm.enqueue({"text": "Plain answer without tools.", "delay_ms": 5})

    outputs = chat.send(tokens["admin"], cid, "What is a dashboard?", options={"mode": "none"})

    assert text_of(outputs[-1]) == "Plain answer without tools."
    assert text_of(outputs[0]) != text_of(outputs[-1])  # streamed in pieces
    (request,) = fake_llm.requests
    assert "tools" not in request and "tool_choice" not in request
    assert "no tools are available" in request["messages"][0]["content"]


def test_mode_none_never_runs_a_tool_call_the_model_returns_anyway(
    chat, tokens, conversation, fake_llm, sql
):
    cid = conversation()
    before = sql.execute("select count(*) from dashboard_deployments").fetchone()[0]
    deploy = {"dashboard_id": 42, "ref": "main", "environment": "staging"}
    fake_llm.enqueue(
        {"text": "Deploying.", "tool_calls": [{"name": "deploy_dashboard", "args": deploy}]}
    )

    outputs = chat.send(tokens["admin"], cid, "Deploy 42", options={"mode": "none"})

    assert kinds(outputs[-1]) == ["text"] and len(fake_llm.requests) == 1
    assert sql.execute("select count(*) from dashboard_deployments").fetchone()[0] == before


def test_mode_none_after_an_agent_turn_sees_its_tool_results_as_text_in_the_same_thread(
    chat, tokens, conversation, fake_llm
):
    cid = conversation()
    fake_llm.enqueue(
        {"tool_calls": [{"name": "get_dashboard", "args": {"dashboard_id": 42}}]},
        {"text": "Dashboard 42 is the Sales overview."},
    )
    chat.send(tokens["admin"], cid, "Show dashboard 42")
    fake_llm.enqueue({"text": "It has charts."})

    chat.send(tokens["admin"], cid, "Summarise it", options={"mode": "none"})

    request = fake_llm.requests[-1]
    assert "tools" not in request
    roles = [m["role"] for m in request["messages"]]
    assert "tool" not in roles and not any(m.get("tool_calls") for m in request["messages"])
    flat = json.dumps(request["messages"])
    assert "I called: get_dashboard" in flat and "Sales overview" in flat
    assert request["messages"][-1]["content"] == "Summarise it"


def test_a_selected_csv_and_table_reach_the_model_and_the_history_row_records_them(
    chat, tokens, conversation, fake_llm, api
):
    cid = conversation("viewer")
    fake_llm.enqueue({"text": "October sales look steady."})
    resources = {"files": [CSV_KEY], "tables": ["sample.orders"]}

    outputs = chat.send(
        tokens["viewer"], cid, "Compare the file with the table", options={"resources": resources}
    )

    assert text_of(outputs[-1]) == "October sales look steady."
    sent = user_text(fake_llm.requests[0])
    assert f'<resource kind="file" ref="{CSV_KEY}">' in sent
    assert "order_id,order_date,region,product,quantity,unit_price,amount" in sent
    assert "\n20261000" in sent  # the file's first data row
    assert '<resource kind="table" ref="sample.orders">' in sent
    assert "- customer_id INTEGER" in sent and "- total_amount REAL" in sent
    assert "First 5 rows" in sent
    (question,) = [m for m in history(api, tokens["viewer"], cid) if m["role"] == "user"]
    record = question["metadata"]["resources"]
    assert [f["ref"] for f in record["files"]] == [CSV_KEY]
    assert record["files"][0]["status"] == "included" and record["files"][0]["size"] > 0
    assert record["tables"] == [
        {
            "ref": "sample.orders",
            "status": "included",
            "truncated": False,
            "columns": 5,
            "sample_rows": 5,
        }
    ]
    assert question["content"] == "Compare the file with the table"  # the row keeps the text only


def test_a_traversal_key_is_refused_by_the_backend_clearly_and_never_reaches_the_model(
    chat, tokens, conversation, fake_llm, api
):
    cid = conversation()
    fake_llm.enqueue({"text": "I only have the table."})
    resources = {"files": [TRAVERSAL], "tables": ["sample.customers"]}

    outputs = chat.send(tokens["admin"], cid, "Read these", options={"resources": resources})

    (refused,) = of_type(outputs[-1], "notice")
    meta = refused["metadata"]
    assert meta["code"] == "RESOURCE_REFUSED" and meta["details"]["code"] == "INVALID_KEY"
    assert "'.' and '..' segments are not allowed" in meta["message"]
    request = json.dumps(fake_llm.requests[0])
    assert "passwd" not in request and "root:" not in request
    sent = user_text(fake_llm.requests[0])
    assert "1 selected resource(s) could not be read" in sent
    assert '<resource kind="table" ref="sample.customers">' in sent
    question = history(api, tokens["admin"], cid)[0]
    files = question["metadata"]["resources"]["files"]
    assert files[0]["status"] == "refused" and files[0]["error"]["code"] == "INVALID_KEY"


def test_a_table_of_a_datasource_that_does_not_exist_or_a_bad_ref_is_refused(
    chat, tokens, conversation, fake_llm
):
    cid = conversation()
    fake_llm.enqueue({"text": "Nothing to read."})
    resources = {"tables": ["nowhere.orders", "sample.orders/../../admin"]}

    outputs = chat.send(tokens["admin"], cid, "Look", options={"resources": resources})

    codes = [n["metadata"]["details"]["code"] for n in of_type(outputs[-1], "notice")]
    assert codes == ["NOT_FOUND", "INVALID_TABLE_REF"]
    assert "<resource kind=" not in json.dumps(fake_llm.requests[0])


def test_a_large_file_is_cut_to_the_budget_said_in_the_prompt_and_shown_to_the_person(
    chat, tokens, conversation, fake_llm, api
):
    cid = conversation()
    fake_llm.enqueue({"text": "It is long."})
    key = "exports/sales_2026_11.csv"
    size = api.get("/api/storage/read", params={"key": key}, headers=bearer(tokens["admin"]))
    assert size.status_code == 200

    outputs = chat.send(
        tokens["admin"],
        cid,
        "Read them",  # three CSVs of about 3.5 KB each: more than the 2000-token budget
        options={"resources": {"files": [key, CSV_KEY, "exports/marketing_funnel_2026_11.csv"]}},
    )

    notices = [
        n for n in of_type(outputs[-1], "notice") if n["metadata"]["code"] == "RESOURCE_TRUNCATED"
    ]
    assert notices, kinds(outputs[-1])
    assert "share about" in notices[0]["metadata"]["message"]
    assert "[... cut here:" in user_text(fake_llm.requests[0])
