"""What the demo model reads from a conversation: the new request and what earlier turns
established (the dashboard "it" refers to, branches created)."""

# ruff: noqa: RUF001  (Russian words in patterns and answers are intended)
from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from agent.prompts import FOCUS_PREFIX

DEFAULT_DATASOURCE = "sample"

# "dash", "dashbaord" and other spellings count: people type fast.
DASHBOARD_ID = re.compile(
    r"(?:dash[a-z]*|дашбор[а-яё]*|панел[а-яё]*)\s*(?:#|№|no\.?\s*|id\s*)?(\d{1,9})\b|#(\d{1,9})\b"
)
MIGRATION_ID = re.compile(r"\b(\d{8}_[a-z0-9_]{1,100})\b")
# How the demo's own answers name a branch: 'branch "fix-1" (id 9) of dashboard #42'.
BRANCH_MENTION = re.compile(
    r"(?:branch|ветк[а-яё]*)\s+[\"«]([\w./-]{1,64})[\"»]\s+\(id\s+(\d{1,9})\)"
    r"(?:\s+(?:of\s+dashboard|дашборда)\s+#(\d{1,9}))?",
    re.I,
)
QUOTED = re.compile(r"[\"«“']([^\"»”']{1,200})[\"»”']")
DOTTED_REF = re.compile(r"\b([a-z][\w-]{0,63})\.([a-z_][\w$]{0,127})\b", re.I)
FILE_KEY = re.compile(r"(?<![\w/])([\w.-]+/[\w./-]*[\w-]|[\w-]+\.[a-z0-9]{2,5})(?![\w/])", re.I)
SELECT = re.compile(r"\bselect\b[\s\S]+", re.I)
DATASOURCE_AFTER = re.compile(
    r"\b(?:datasource|source|database|db|on|in|from|to|for|источник[а-яё]*|базе|базы|на|в|из|к)"
    r"\s+([a-z][\w-]{0,63})\b"
)
# "this" (on its own too) is what is on screen: the page in focus; "it" is the conversation's.
THIS_DASHBOARD = (
    r"\b(this|current|open) (dashboard|one)\b|\bhere\b|\bthis\b|\bэто\b"
    r"|(этот|этого|этом|текущ[а-яё]*) дашборд|здесь"
)
NOT_DATASOURCES = {
    "the", "a", "an", "it", "its", "this", "that", "main", "production", "prod", "staging",
    "dashboard", "dashboards", "branch", "table", "tables", "sql", "logs", "files",
}  # fmt: skip


def _has(pattern: str, text: str) -> bool:
    return re.search(pattern, text) is not None


@dataclass
class Memory:
    """What earlier turns established: the last dashboard and migration mentioned, branches."""

    dashboard_id: int | None = None
    focus_id: int | None = None  # the dashboard open in the browser (FR-023)
    branches: list[dict[str, Any]] = field(default_factory=list)
    commits: int = 0
    migration_id: str | None = None


def remember(messages: Sequence[BaseMessage]) -> Memory:
    """Scan the conversation, oldest first, for dashboard ids, created branches, commits and
    migrations (also in answers kept as plain text, e.g. a history given without tool calls)."""
    memory = Memory()
    for message in messages:
        if isinstance(message, SystemMessage):
            memory.focus_id = focused_dashboard(text_of(message))
            continue
        if isinstance(message, HumanMessage | AIMessage):
            migrations = MIGRATION_ID.findall(text_of(message).lower())
            memory.migration_id = migrations[-1] if migrations else memory.migration_id
        if isinstance(message, HumanMessage):
            found = dashboard_ids(text_of(message))
            memory.dashboard_id = found[-1] if found else memory.dashboard_id
        elif isinstance(message, AIMessage):
            memory.branches.extend(mentioned_branches(text_of(message)))
            for call in message.tool_calls:
                if isinstance(call["args"].get("dashboard_id"), int):
                    memory.dashboard_id = call["args"]["dashboard_id"]
                memory.commits += call["name"] == "commit_changes"
        elif isinstance(message, ToolMessage) and message.name == "create_branch":
            body = parse_json(message)
            if isinstance(body, dict) and "id" in body:
                memory.branches.append(body)
    return memory


def mentioned_branches(text: str) -> list[dict[str, Any]]:
    """Branches an answer names with their id, as the demo's own summaries do."""
    return [
        {"name": name, "id": int(branch_id), "dashboard_id": int(dashboard) if dashboard else None}
        for name, branch_id, dashboard in BRANCH_MENTION.findall(text)
    ]


def focused_dashboard(system_prompt: str) -> int | None:
    """The id of the dashboard the person is looking at, from the system prompt's focus line."""
    _, found, rest = system_prompt.partition(FOCUS_PREFIX)
    if not found:
        return None
    try:
        focus = json.loads(rest.splitlines()[0])
    except (ValueError, IndexError):
        return None
    dashboard_id = focus.get("id") if isinstance(focus, dict) else None
    kind = focus.get("kind", "dashboard") if isinstance(focus, dict) else None
    return dashboard_id if kind == "dashboard" and isinstance(dashboard_id, int) else None


def text_of(message: BaseMessage) -> str:
    """The text parts of a message's content."""
    if isinstance(message.content, str):
        return message.content
    parts = [p.get("text", "") if isinstance(p, dict) else str(p) for p in message.content]
    return " ".join(part for part in parts if part)


def parse_json(message: BaseMessage) -> Any:
    try:
        return json.loads(text_of(message))
    except ValueError:
        return None


def dashboard_ids(text: str) -> list[int]:
    return [int(a or b) for a, b in DASHBOARD_ID.findall(text.lower())]


def is_russian(text: str) -> bool:
    return _has(r"[а-яё]", text.lower())


@dataclass(frozen=True)
class Request:
    """One user message as routing sees it."""

    raw: str
    text: str  # lowercased
    memory: Memory

    @property
    def explicit_id(self) -> int | None:
        found = dashboard_ids(self.raw)
        return found[-1] if found else None

    @property
    def dashboard_id(self) -> int | None:
        """The dashboard named here; "this dashboard" is the open one; "it" is the last one the
        conversation mentioned, else the open one."""
        if self.explicit_id is not None:
            return self.explicit_id
        if _has(THIS_DASHBOARD, self.text) and self.memory.focus_id is not None:
            return self.memory.focus_id
        return self.memory.dashboard_id or self.memory.focus_id

    @property
    def quoted(self) -> str | None:
        match = QUOTED.search(self.raw)
        return match.group(1).strip() if match else None

    def datasource(self, text: str | None = None) -> str | None:
        """A datasource named in `text` (default: the whole message), e.g. "in sample"."""
        for name in DATASOURCE_AFTER.findall(self.text if text is None else text):
            if name not in NOT_DATASOURCES:
                return str(name)
        return None


@dataclass(frozen=True)
class Call:
    """A routed tool call, or a question back to the user when an argument is missing."""

    name: str
    args: dict[str, Any]


@dataclass(frozen=True)
class Ask:
    """The model needs one more detail; `topic` selects the question."""

    topic: str


Route = Call | Ask | None
Rule = Callable[[Request], Route]
