"""A template that reaches for `__class__` or for a field that does not exist fails its step
(jinja2's sandbox, StrictUndefined), never the process: the workflow stops with the error and
the next turn works. These workflows are the test's own, loaded by a backend of their own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.agent.support import Chat, error_code, of_type, text_of
from tests.support.processes import serve

SCHEMA = {
    "name": "schema",
    "type": "tool_call",
    "tool": "get_table_schema",
    "params": {"table_ref": "sample.orders"},
}
WORKFLOWS = {
    "sneaky.yaml": {
        "name": "sneaky",
        "description": "Reaches for Python internals.",
        "trigger_keywords": ["sneaky class"],
        "steps": [
            SCHEMA,
            {"name": "peek", "type": "llm_call", "prompt": "{{ steps.schema.__class__.__mro__ }}"},
        ],
        "final_answer": "never",
    },
    "missing.yaml": {
        "name": "missing",
        "description": "Reaches for a field the tool result lacks.",
        "trigger_keywords": ["missing field"],
        "steps": [
            SCHEMA,
            {
                "name": "use",
                "type": "tool_call",
                "tool": "get_dashboard",
                "params": {"dashboard_id": "{{ steps.schema.no_such_field }}"},
            },
        ],
        "final_answer": "never",
    },
    "late.yaml": {
        "name": "late",
        "description": "Fails only in its final answer.",
        "trigger_keywords": ["late failure"],
        "steps": [SCHEMA],
        "final_answer": "{{ steps.schema.items[0].__class__ }}",
    },
}


@pytest.fixture(scope="module")
def edge_chat(
    seeded: dict[str, str], start_agent, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Chat]:
    folder = tmp_path_factory.mktemp("edge-workflows")
    for name, data in WORKFLOWS.items():
        (folder / name).write_text(yaml.safe_dump(data))
    log = Path(tmp_path_factory.mktemp("edge-logs")) / "backend.log"
    env = {**seeded, "WORKFLOW__DIR": str(folder)}
    with serve(["backend"], env, health_path="/readyz", log_path=log) as (backend, _proc):  # noqa: SIM117
        with start_agent(BACKEND_URL=backend) as (base, _agent):
            yield Chat(base)


@pytest.mark.parametrize(
    ("text", "step", "says"),
    [
        ("sneaky class", "peek", "access to attribute '__class__' of 'dict' object is unsafe"),
        ("missing field", "use", "has no attribute 'no_such_field'"),
    ],
)
def test_a_template_error_fails_its_step_and_the_next_turn_works(
    edge_chat, tokens, conversation, fake_llm, sql, text, step, says
):
    cid = conversation()

    outputs = edge_chat.send(tokens["admin"], cid, text, options={"mode": "yaml"})

    shown = [m["metadata"] for m in of_type(outputs[-1], "workflow_step")]
    assert [(s["name"], s["status"]) for s in shown] == [("schema", "completed"), (step, "failed")]
    assert shown[1]["error"]["code"] == "TEMPLATE_ERROR" and says in shown[1]["error"]["message"]
    assert error_code(outputs) == "WORKFLOW_FAILED" and fake_llm.requests == []
    status = sql.execute(
        "select status from workflow_executions where conversation_id = %s", (cid,)
    ).fetchone()
    assert status == ("failed",)

    fake_llm.enqueue({"text": "Still here."})
    after = edge_chat.send(tokens["admin"], cid, "Are you still there?")
    assert text_of(after[-1]) == "Still here."


def test_a_final_answer_that_reaches_for_internals_fails_the_workflow_not_the_process(
    edge_chat, tokens, conversation, fake_llm, sql
):
    cid = conversation()

    outputs = edge_chat.send(tokens["admin"], cid, "late failure", options={"mode": "yaml"})

    assert error_code(outputs) == "WORKFLOW_FAILED"
    assert "its final answer" in of_type(outputs[-1], "error")[0]["metadata"]["message"]
    status = sql.execute(
        "select status, error->>'code' from workflow_executions where conversation_id = %s", (cid,)
    ).fetchone()
    assert status == ("failed", "TEMPLATE_ERROR")
