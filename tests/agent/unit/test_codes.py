"""A stream code is spelled once: as a member of agent.errors.Code. Outside agent/demo/ (the
offline model's scripts) no other agent module writes one as a string literal, so a renamed or
new code cannot drift between modules."""

from __future__ import annotations

import ast
from pathlib import Path

from agent.errors import Code

AGENT = Path(__file__).resolve().parents[3] / "agent"
ALLOWED = {"errors.py"}


def _literals(path: Path) -> set[str]:
    codes = {c.value for c in Code}
    tree = ast.parse(path.read_text(), filename=str(path))
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in codes
    }


def test_no_agent_module_but_errors_spells_a_stream_code() -> None:
    spelled = {
        str(path.relative_to(AGENT)): sorted(found)
        for path in sorted(AGENT.rglob("*.py"))
        if path.relative_to(AGENT).parts[0] != "demo"
        and str(path.relative_to(AGENT)) not in ALLOWED
        and (found := _literals(path))
    }
    assert spelled == {}


def test_the_scan_sees_a_literal() -> None:
    assert _literals(AGENT / "errors.py") >= {"CONVERSATION_BUSY", "TOKEN_EXPIRED"}
