"""A turn's history rows are read back through common/stream.py, by both processes: what the
agent writes (agent/stream/messages.py, agent/hitl.py) is what the readers find, and a row
written long ago with something malformed in it is read without failing."""

from __future__ import annotations

from agent import hitl
from agent.stream import messages
from common import stream


def test_what_the_agent_writes_the_readers_find():
    start = messages.tool_start("read_file", "c1", {"key": "a.txt"}, "Reading a file")
    parts: list[stream.Part] = [
        {"role": "assistant", "content": "", "metadata": dict(messages.tool_end(start, "x", 3))},
        {"role": "assistant", "content": "Done.", "metadata": {}},
    ]
    row = dict(stream.record(parts))
    read = stream.parts_of(row)
    assert read == parts
    card = stream.tool_card(read[0]["metadata"])
    assert card is not None and card["tool"] == "read_file" and card["type"] == stream.TOOL_END
    assert stream.tool_card(read[1]["metadata"]) is None
    assert stream.kind_of(read[1]["metadata"]) is None

    pending = hitl.Pending("i", "deploy_dashboard", "c2", {"dashboard_id": 1}, "Deploy 1")
    decision_row = hitl.decision_record(pending, "confirm", edited={"dashboard_id": 2})
    decision = stream.decision_of(decision_row["role"], decision_row["metadata"])
    assert decision is not None
    assert (decision["decision"], decision["args"], decision.get("model_args")) == (
        "confirm",
        {"dashboard_id": 2},
        {"dashboard_id": 1},
    )
    assert stream.question_of("user", decision_row["metadata"]) is None
    assert set(stream.DECISION_FIELDS) >= set(decision) - {"type"}


def test_a_malformed_row_is_read_without_failing():
    assert stream.parts_of({"parts": ["text", None, {"content": None}]}) == [
        {"role": "assistant", "content": "", "metadata": {}}
    ]
    assert stream.parts_of(None) == [] and stream.parts_of({"parts": "x"}) == []
    assert stream.tool_card({"type": "tool_end"}) is None  # no tool named
    assert stream.decision_of("assistant", {"type": stream.DECISION}) is None
    question = stream.question_of("user", {"attachments": "x", "resources": {"files": [1]}})
    assert question is not None
    assert stream.attachments_of(question) == []
    assert stream.resources_of(question) == {"files": [], "tables": []}


def test_the_previous_diagnosis_is_found_in_a_stored_turns_parts():
    from agent.diagnosis.previous import _from_row
    from tests.agent._diagnosis import draft_of

    shown = messages.diagnosis(run_id="r", outcome="draft", progress={}, draft=draft_of("c1"))
    row = {
        "role": "assistant",
        "metadata": {
            "diagnosis": {"query": "Why is it failing?"},
            **stream.record(
                [
                    {"role": "assistant", "content": "text", "metadata": {}},
                    {"role": "assistant", "content": "", "metadata": dict(shown)},
                ]
            ),
        },
    }
    found = _from_row(row)
    assert found is not None and found.query == "Why is it failing?"
    assert found.draft.analysis[0].tool_call_ids == ["c1"]
    assert _from_row({**row, "role": "user"}) is None
