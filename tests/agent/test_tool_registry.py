"""The tool catalogue (common/tools.py) is the one list of the agent's tools: the registry
builds each over the catalogue's argument schema, and every other list of them (the backend's
workflow steps, the generated browser list and card headings, the confirm set, the card titles)
is derived from it or pinned to it here, so a tool added in one place only fails a test."""

from __future__ import annotations

import re
import typing
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langchain.tools import BaseTool
from pydantic import BaseModel

from agent.backend_client import BackendClient
from agent.config import Settings
from agent.tools import names
from agent.tools.registry import BUILDERS, REGISTRY, RegistryError, build_tools
from backend.workflows import definition

ROOT = Path(__file__).resolve().parents[2]
DICTIONARIES = {
    lang: ROOT / "frontend" / "src" / "lib" / "i18n" / f"{lang}.ts" for lang in ("en", "ru")
}
GENERATED = ROOT / "frontend" / "src" / "lib" / "codes.ts"
TOOL_TITLE = re.compile(r'^\s*"toolTitle\.(\w+)\.(running|settled)":\s*"((?:[^"\\]|\\.)*)"', re.M)


@pytest.fixture
async def built() -> AsyncIterator[dict[str, BaseTool]]:
    client = BackendClient(Settings(), http=httpx.AsyncClient())
    try:
        yield {tool.name: tool for tool in build_tools(client)}
    finally:
        await client.aclose()


def _arguments(tool: BaseTool) -> frozenset[str]:
    schema = tool.tool_call_schema
    assert isinstance(schema, type) and issubclass(schema, BaseModel)
    return frozenset(schema.model_json_schema()["properties"])


def _titles(lang: str) -> dict[tuple[str, str], str]:
    """The card headings the browser's dictionary in `lang` spreads from the generated list."""
    generated = GENERATED.read_text(encoding="utf-8")
    block = generated.split(f"export const TOOL_TITLES_{lang.upper()} = {{", 1)[1]
    block = block.split("} as const;", 1)[0]
    return {(tool, phase): words for tool, phase, words in TOOL_TITLE.findall(block)}


def test_every_catalogued_tool_is_built_once_in_the_catalogues_order(
    built: dict[str, BaseTool],
) -> None:
    assert list(built) == list(names.TOOL_NAMES) == [entry.info.name for entry in REGISTRY]
    assert len(set(names.TOOL_NAMES)) == len(names.TOOL_NAMES) == 14
    assert set(BUILDERS) == set(names.TOOL_NAMES)


async def test_a_builder_that_builds_another_tool_is_refused(monkeypatch: Any) -> None:
    entry = REGISTRY[0]
    swapped = type(entry)(entry.info, BUILDERS[names.QUERY_LOGS])
    monkeypatch.setattr("agent.tools.registry.REGISTRY", (swapped, *REGISTRY[1:]))
    client = BackendClient(Settings(), http=httpx.AsyncClient())
    try:
        with pytest.raises(RegistryError, match="search_dashboards"):
            build_tools(client)
    finally:
        await client.aclose()


def test_the_confirm_set_and_the_write_set_come_from_the_catalogue() -> None:
    assert set(names.CONFIRM_TOOLS) == {"commit_changes", "deploy_dashboard", "execute_migration"}
    assert {"create_branch", *names.CONFIRM_TOOLS} == names.WRITE_TOOLS
    assert names.title("query_logs") == "Searching the logs"
    assert names.title("some_new_tool") == "some_new_tool"
    assert set(names.DIAGNOSIS_TOOLS) <= set(names.TOOL_NAMES)


def test_each_tool_is_built_over_the_catalogues_argument_schema(
    built: dict[str, BaseTool],
) -> None:
    for name, tool in built.items():
        assert tool.args_schema is names.TOOLS[name].arguments, name


def test_the_backends_workflow_step_tools_and_arguments_are_the_agents(
    built: dict[str, BaseTool],
) -> None:
    assert set(typing.get_args(definition.ToolName)) == set(names.TOOL_NAMES)
    assert list(typing.get_args(definition.ToolName)) == list(definition.TOOL_ARGUMENTS)
    assert {name: _arguments(t) for name, t in built.items()} == definition.TOOL_ARGUMENTS


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_each_frontend_dictionary_heads_every_tool_card_and_no_other(lang: str) -> None:
    dictionary = DICTIONARIES[lang].read_text(encoding="utf-8")
    assert f"...TOOL_TITLES_{lang.upper()}," in dictionary
    assert not TOOL_TITLE.findall(dictionary), "tool headings are generated (make api-types)"
    titles = _titles(lang)
    assert {tool for tool, _ in titles} == set(names.TOOL_NAMES), DICTIONARIES[lang]
    for tool in names.TOOL_NAMES:
        assert titles.get((tool, "running")) and titles.get((tool, "settled")), (lang, tool)


def test_the_english_running_heading_is_the_title_the_agent_streams() -> None:
    titles = _titles("en")
    assert {tool: titles[(tool, "running")] for tool in names.TOOL_NAMES} == dict(names.TITLES)


def test_the_demo_models_rules_call_only_registered_tools() -> None:
    called = {
        name
        for path in (ROOT / "agent" / "demo").glob("*.py")
        for name in re.findall(r'\bCall\(\s*"(\w+)"', path.read_text(encoding="utf-8"))
    }
    assert called and called <= set(names.TOOL_NAMES)
