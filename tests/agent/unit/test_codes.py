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


# The backend's side: one enumeration (backend/codes.py), spelled as literals in at most two
# modules, and every code the agent reads from an error envelope is one of its members.
BACKEND = AGENT.parent / "backend"
BACKEND_ALLOWED = {"codes.py"}


def test_every_backend_code_the_agent_reads_is_one_the_backend_writes() -> None:
    from agent.errors import BACKEND_CODES
    from backend.codes import Code as BackendCode

    assert BACKEND_CODES - {c.value for c in BackendCode} == set()


def test_at_most_two_backend_modules_spell_an_error_code() -> None:
    from backend.codes import Code as BackendCode

    codes = {c.value for c in BackendCode}
    spelled = set()
    for path in sorted(BACKEND.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        if any(
            isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in codes
            for node in ast.walk(tree)
        ):
            spelled.add(str(path.relative_to(BACKEND)))
    assert spelled <= BACKEND_ALLOWED | {"errors.py"}
    assert len(spelled) <= 2
