"""No module of the agent outside demo/ (the offline model's scripts) grows past 400 lines
(STYLE.md, "Naming and size": split past ~400)."""

from __future__ import annotations

from pathlib import Path

AGENT = Path(__file__).resolve().parents[3] / "agent"
LIMIT = 400


def test_no_agent_module_outside_demo_is_over_400_lines():
    long = {
        str(path.relative_to(AGENT)): n
        for path in sorted(AGENT.rglob("*.py"))
        if path.relative_to(AGENT).parts[0] != "demo"
        and (n := len(path.read_text().splitlines())) > LIMIT
    }
    assert long == {}
