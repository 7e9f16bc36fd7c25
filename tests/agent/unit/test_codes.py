"""A code is spelled once, as a member of the one list both processes share (common/codes.py
`Code`). Outside agent/demo/ (the offline model's scripts) no agent module and no backend module
writes one as a string literal, so a renamed or new code cannot drift between modules or
processes; every code the backend names is one it is known to write (`BACKEND`), and every code
the agent reads from the backend is one of those."""

from __future__ import annotations

import ast
from pathlib import Path

from common.codes import BACKEND, Code

ROOT = Path(__file__).resolve().parents[3]
AGENT = ROOT / "agent"
BACKEND_DIR = ROOT / "backend"
COMMON = ROOT / "common"
CODES = {c.value for c in Code}


def _literals(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in CODES
    }


def _spelled(package: Path, allowed: set[str]) -> dict[str, list[str]]:
    return {
        str(path.relative_to(package)): sorted(found)
        for path in sorted(package.rglob("*.py"))
        if path.relative_to(package).parts[0] != "demo"
        and str(path.relative_to(package)) not in allowed
        and (found := _literals(path))
    }


def test_no_agent_module_spells_a_code() -> None:
    assert _spelled(AGENT, set()) == {}


def test_no_backend_module_spells_a_code() -> None:
    assert _spelled(BACKEND_DIR, set()) == {}


def test_only_the_list_itself_spells_a_code_on_the_ground_floor() -> None:
    assert _spelled(COMMON, {"codes.py"}) == {}


def test_the_scan_sees_a_literal() -> None:
    assert _literals(COMMON / "codes.py") >= {"CONVERSATION_BUSY", "TOKEN_EXPIRED"}


def _named_in(package: Path) -> set[str]:
    """Every `Code.X` a package's modules name."""
    named = set()
    for path in package.rglob("*.py"):
        tree = ast.parse(path.read_text(), filename=str(path))
        named |= {
            node.attr
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "Code"
        }
    return named


def test_every_code_the_backend_names_is_one_it_writes() -> None:
    named = _named_in(BACKEND_DIR)
    assert named, "the scan found no Code.X in backend/"
    assert named - {c.name for c in BACKEND} == set()


def test_every_backend_code_the_agent_reads_is_one_the_backend_writes() -> None:
    from agent.errors import BACKEND_CODES

    assert not BACKEND_CODES - BACKEND


def test_the_processes_views_are_the_one_list() -> None:
    from agent.errors import Code as AgentCode
    from backend.codes import Code as BackendCode

    assert AgentCode is BackendCode is Code
