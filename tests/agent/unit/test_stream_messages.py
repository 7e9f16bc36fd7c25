"""The stream's message shapes (agent/stream/messages.py, CONTRACT.md "Stream protocol") and the
browser's types for them (frontend/src/lib/protocol.ts) name the same fields, as codes.ts is
pinned to the agent's codes: a field added, renamed or made optional on one side fails here.
And outside agent/stream/ no agent module builds a stream message or renders an AgentError."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from agent.errors import AgentError, BackendError, BudgetExhausted, Code
from agent.stream import Turn, messages

ROOT = Path(__file__).resolve().parents[3]
PROTOCOL = ROOT / "frontend" / "src" / "lib" / "protocol.ts"
AGENT = ROOT / "agent"
BROWSER = {  # the browser's interface -> the shapes it reads
    "ToolMeta": ("tool_start", "tool_end", "tool_error"),
    "ConfirmMeta": ("confirm_required",),
    "ErrorMeta": ("error",),
    "NoticeMeta": ("notice",),
    "WorkflowStepMeta": ("workflow_step",),
    "DiagnosisMeta": ("diagnosis",),
}


def _interface(name: str) -> dict[str, bool]:
    """The fields of a TypeScript interface in protocol.ts: name -> required."""
    source = PROTOCOL.read_text(encoding="utf-8")
    body = re.search(r"export interface " + name + r" \{(.*?)\n\}", source, re.S)
    assert body is not None, f"protocol.ts has no interface {name}"
    fields = re.findall(r"^  (\w+)(\??):", body.group(1), re.M)
    return {field: not optional for field, optional in fields}


@pytest.mark.parametrize("interface", sorted(BROWSER))
def test_the_browsers_type_names_the_fields_the_agent_sends(interface):
    browser = _interface(interface)
    shapes = [messages.SHAPES[t] for t in BROWSER[interface]]
    sent = set().union(*(s.__annotations__ for s in shapes))
    assert set(browser) == sent
    for field, required in browser.items():
        if required:  # every shape the browser reads with this type always carries it
            assert all(field in s.__required_keys__ for s in shapes), field


def test_every_shape_of_the_contract_has_a_constructor():
    assert set(messages.SHAPES) == {t for ts in BROWSER.values() for t in ts}
    start = messages.tool_start("get_dashboard", "c1", {"dashboard_id": 42}, "Get dashboard")
    built = [
        start,
        messages.tool_end(start, {"ok": True}, 3),
        messages.tool_error(start, {"code": Code.FORBIDDEN, "message": "no"}, 3),
        messages.confirm_required("t", "deploy_dashboard", "c2", {}, "Deploy"),
        messages.error(Code.LLM_ERROR, "m"),
        messages.notice(Code.TRUNCATED, "m", {"percent": 50}),
        messages.workflow_step(
            execution_id=1,
            step_index=0,
            name="s",
            step_type="tool_call",
            workflow="w",
            title="S",
            total_steps=1,
        ),
        messages.diagnosis(run_id="r", outcome="stopped", progress={}, stop_reason=Code.DEADLINE),
    ]
    for shape in built:
        typed = messages.SHAPES[shape["type"]]
        assert typed.__required_keys__ <= set(shape) <= set(typed.__annotations__)


def test_an_agent_error_is_rendered_as_its_code_message_and_details():
    turn = Turn("t")
    turn.fail(AgentError("over", code=Code.USAGE_LIMIT, details={"resets_at": "x"}))
    turn.fail(BudgetExhausted("out of time"))
    assert [m["metadata"] for m in turn.snapshot()] == [
        {"type": "error", "code": "USAGE_LIMIT", "message": "over", "details": {"resets_at": "x"}},
        {"type": "error", "code": "BUDGET_EXHAUSTED", "message": "out of time"},
    ]


@pytest.mark.parametrize(
    ("status", "code", "shown"),
    [
        (404, "NOT_FOUND", ("NOT_FOUND", "Conversation not found.")),
        (422, "INVALID_INPUT", ("NOT_FOUND", "Conversation not found.")),
        (401, "TOKEN_EXPIRED", ("TOKEN_EXPIRED", "backend says")),
        (401, "UNAUTHORIZED", ("UNAUTHORIZED", "backend says")),
        (500, "INTERNAL", ("BACKEND_UNAVAILABLE", "The platform is not answering; try again.")),
        (409, "CONFLICT", ("BACKEND_UNAVAILABLE", "The platform is not answering; try again.")),
    ],
)
def test_a_backend_failure_is_shown_by_its_one_status_reading(status, code, shown):
    turn = Turn("t")
    turn.fail(BackendError(status, code, "backend says"))
    (message,) = turn.snapshot()
    assert (message["metadata"]["code"], message["metadata"]["message"]) == shown
    assert "backend says" not in str(message) or status == 401  # no raw backend text


def _builds_a_message(path: Path) -> list[str]:
    """What in `path` builds a stream message itself: a dict with a stream `type` key, or an
    AgentError's code and message handed to the turn (`turn.error(exc.code, exc.message)`)."""
    types = set(messages.SHAPES)
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if (
                    isinstance(key, ast.Constant)
                    and key.value == "type"
                    and isinstance(value, ast.Constant)
                    and value.value in types
                ):
                    found.append(f"line {node.lineno}: a {value.value} dict")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "error"
            and node.args
            and isinstance(node.args[0], ast.Attribute)
            and node.args[0].attr == "code"
        ):
            found.append(f"line {node.lineno}: an error's code rendered (use Turn.fail)")
    return found


def test_outside_the_stream_package_no_module_builds_a_stream_message():
    found = {
        str(path.relative_to(AGENT)): where
        for path in sorted(AGENT.rglob("*.py"))
        if path.relative_to(AGENT).parts[0] not in ("stream", "demo")
        and (where := _builds_a_message(path))
    }
    assert found == {}


def test_the_scan_sees_a_message_built_by_hand(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text('x = {"type": "notice", "code": c}\nturn.error(exc.code, exc.message)\n')
    assert len(_builds_a_message(sample)) == 2
