"""docs/architecture.md's layer tables say what the import-linter contracts check: the packages,
the agent's layers and the backend's, top first, the same names on each line."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NAME = re.compile(r"`([a-z_]+)/?`")
TABLES = {  # contract (by its container) -> the line that introduces its table in "## Layers"
    None: "## Layers",
    "agent": "Inside `agent/`",
    "backend": "Inside `backend/`",
}


def _contracts() -> dict[str | None, list[set[str]]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    found: dict[str | None, list[set[str]]] = {}
    for contract in config["tool"]["importlinter"]["contracts"]:
        if contract["type"] != "layers":
            continue
        containers = contract.get("containers") or [None]
        for container in containers:
            found[container] = [set(re.split(r"\s*[:|]\s*", line)) for line in contract["layers"]]
    return found


def _table(intro: str) -> list[set[str]]:
    """The backticked names of each row of the first table after `intro` (for the packages
    table, those of its first column; for the others, of its second)."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text[text.index(intro) :]
    rows: list[set[str]] = []
    for line in section.splitlines()[1:]:
        if not line.startswith("|"):
            if rows:
                break
            continue
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        if cells[0] in ("layer", "---|---") or set(line) <= {"|", "-"}:
            continue
        rows.append(set(NAME.findall(cells[0] if intro == TABLES[None] else cells[1])))
    return rows


@pytest.mark.parametrize("container", list(TABLES), ids=["packages", "agent", "backend"])
def test_the_layer_table_matches_the_import_contract(container):
    assert _table(TABLES[container]) == _contracts()[container]
