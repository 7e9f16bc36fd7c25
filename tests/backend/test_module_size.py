"""No module of the backend grows past 400 lines (STYLE.md, "Naming and size": split past
~400), as in the agent (tests/agent/unit/test_module_size.py)."""

from __future__ import annotations

from pathlib import Path

BACKEND = Path(__file__).resolve().parents[2] / "backend"
LIMIT = 400


def test_no_backend_module_is_over_400_lines():
    long = {
        str(path.relative_to(BACKEND)): n
        for path in sorted(BACKEND.rglob("*.py"))
        if (n := len(path.read_text().splitlines())) > LIMIT
    }
    assert long == {}
