"""Fast unit tests of the agent's pieces: no processes, no Postgres, no fake-LLM server (the
scripted model and fake backend of scripted.py stand in). A hang here is a bug: 30 s, not 120."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.timeout(30))
