"""The per-run context. Secrets (the user's JWT) live here, never in graph state or
config["configurable"], which LangGraph writes to the checkpoint tables."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Spent:
    """What one run has used of its budgets (agent/middleware.py RunBudget); one per submit."""

    model_calls: int = 0
    tool_calls: int = 0


@dataclass(frozen=True)
class Context:
    user_token: str = field(repr=False)  # forwarded to the backend as X-On-Behalf-Of
    user_id: str
    username: str
    roles: tuple[str, ...]
    conversation_id: str
    focus: dict[str, Any] | None = None  # what the person is looking at (FR-023), e.g. a dashboard
    audit_run_id: str | None = None  # the run tools act for (X-Run-Id in the audit)
    channel: str | None = None  # how the call came in when not a chat (X-Channel, e.g. "mcp")
    lang: str = "en"  # the person's language ("en"/"ru", agent/language.py): the card's line
    offer_tools: bool = True  # False in mode `none`: the model is offered no tools (NoTools)
    spent: Spent = field(default_factory=Spent, repr=False, compare=False)  # this run's budgets
