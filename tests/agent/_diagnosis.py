"""Helpers of the diagnosis tests: scripted model rounds (envelope tool calls, drafts), the
`diagnosis` message of a stream, the observations the model was sent, and the audit rows a
run's tool calls left in the backend."""

from __future__ import annotations

import json
import uuid
from typing import Any

import psycopg
from psycopg.rows import dict_row

from tests.agent.support import Chat, Messages, of_type

DIAGNOSE = {"mode": "diagnose"}


def new_id(name: str) -> str:
    return f"call_{name}_{uuid.uuid4().hex[:8]}"


def call(
    name: str, arguments: dict[str, Any], *, id: str, previous: tuple[str, str] | None = None
) -> dict[str, Any]:
    """A model round asking for one envelope tool call."""
    args: dict[str, Any] = {"input": arguments}
    if previous is not None:
        args["previous_observation"] = {"tool_call_id": previous[0], "assessment": previous[1]}
    return {"tool_calls": [{"id": id, "name": name, "args": args}]}


def draft_of(*cited: str, conclusion: str | None = "Chart SQL selects a renamed column") -> dict:
    """A valid DiagnosisDraft citing `cited` (a conclusion only when something is cited)."""
    analysis = [
        {"finding": f"Seen in {c}", "evidence_status": "SUPPORTED", "tool_call_ids": [c]}
        for c in cited
    ]
    return {
        "conclusion": {"summary": conclusion, "confidence": "medium"}
        if cited and conclusion
        else None,
        "analysis": analysis,
        "action_plan": ["Fix the chart's SQL on a branch"] if cited else [],
        "recommendations": ["Validate before deploying"],
        "limitations": {"checked_scope": [f"calls {', '.join(cited)}"], "missing_info": []},
    }


def answer(draft: dict[str, Any]) -> dict[str, Any]:
    """A model round whose text is `draft` as bare JSON."""
    return {"text": json.dumps(draft)}


def diagnose(chat: Chat, token: str, cid: str, text: str, **kwargs: Any) -> list[Messages]:
    return chat.send(token, cid, text, options=DIAGNOSE, **kwargs)


def diagnosis_of(messages: Messages) -> dict[str, Any]:
    """The metadata of the turn's one `diagnosis` message."""
    (message,) = of_type(messages, "diagnosis")
    return dict(message["metadata"])


def observation(request: dict[str, Any], call_id: str) -> dict[str, Any]:
    """The observation of `call_id` as the model was sent it."""
    for message in request["messages"]:
        if message["role"] == "tool" and message["tool_call_id"] == call_id:
            return dict(json.loads(message["content"]))
    raise AssertionError(f"no observation of {call_id} in the request")


def card(messages: Messages, call_id: str) -> dict[str, Any]:
    found = [m["metadata"] for m in messages if m["metadata"].get("call_id") == call_id]
    assert len(found) == 1, found
    return dict(found[0])


def audited(database_url: str, run_id: str) -> list[tuple[str, str]]:
    """(action, outcome) of the audit rows that name `run_id`, oldest first."""
    with psycopg.connect(database_url) as conn, conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "SELECT action, outcome FROM assistant_audit WHERE details->>'run_id' = %s ORDER BY id",
            (run_id,),
        )
        return [(row["action"], row["outcome"]) for row in cur.fetchall()]
