"""Dashboards named by their title ("Why is Orders overview failing?", "Deploy Revenue daily to
production"): the demo model asks `search_dashboards` for the title's words, as a real model
would, then acts on the dashboard whose title the request names.

A request is looked up by name when it wants one dashboard (its health, its details, a branch, a
deploy), names none by id or by "it"/"this", and words are left once the request's own
vocabulary is taken away."""

# ruff: noqa: RUF001  (Russian words in patterns and answers are intended)
from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from agent.demo import routes
from agent.demo.request import THIS_DASHBOARD, Call, Request, Route, text_of
from agent.tools.names import SEARCH_DASHBOARDS

WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*")
INTENT = "|".join(
    (routes.DEPLOY, routes.SHIP, routes.HEALTH, routes.ABOUT, r"\bbranch|ветк|создай|create")
)
VOCABULARY = re.compile(
    "|".join((INTENT, routes.ENVIRONMENT, routes.PROBLEMS, r"dash|дашборд|панел")), re.I
)
STOP = frozenset(
    re.findall(
        r"\S+",
        """
    a an the is are was be what what's whats which with to in on of for from at by please me
    my our can could you how does do did not doesn't isn't it this that and then now again
    tell give check go get let us into as up run working work works
    почему что с со в во на к ко по для мне пожалуйста не так ли как это этот эта и а затем
    потом у из ну же он она оно работает
        """,
    )
)
MAX_WORDS = 8
# A branch's or version's own name ("named fix-q3", "branch hotfix") is no part of a title.
QUOTED_NAME = re.compile(r"\b(?:named|called|branch|ветк[а-яё]*)\s+\S+", re.I)


def title_words(text: str) -> str | None:
    """What is left of `text` once the request's own words are taken away: the title, if any."""
    for said in (routes.NAME_AFTER, routes.REF_AFTER, QUOTED_NAME):
        text = said.sub(" ", text)
    kept = [
        word
        for word in WORD.findall(text)
        if word.lower() not in STOP and not VOCABULARY.search(word.lower()) and not word.isdigit()
    ]
    return " ".join(kept[:MAX_WORDS]) or None


def _referenced(req: Request) -> bool:
    """The request points at a dashboard without naming it: "it", "this one", an id."""
    if req.explicit_id is not None:
        return True
    return bool(re.search(routes.PRONOUN, req.text) or re.search(THIS_DASHBOARD, req.text))


def lookup(req: Request, routed: Route) -> Call | None:
    """The search that finds the dashboard `req` names by title, when it names one that way."""
    if _referenced(req) or not re.search(INTENT, req.text):
        return None
    wants_one = routed is None or not isinstance(routed, Call) or "dashboard_id" in routed.args
    if isinstance(routed, Call) and routed.name == SEARCH_DASHBOARDS:
        wants_one = not routed.args.get("query")
    words = title_words(req.raw)
    if not wants_one or words is None:
        return None
    return Call(SEARCH_DASHBOARDS, {"query": words})


def _items(message: ToolMessage) -> list[dict[str, Any]]:
    try:
        body = json.loads(text_of(message))
    except ValueError:
        return []
    items = body.get("items") if isinstance(body, dict) else None
    return [i for i in items or [] if isinstance(i, dict) and isinstance(i.get("id"), int)]


def match(message: ToolMessage, text: str) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """The dashboard of the search result whose title `text` names (the longest such title),
    else the only one found; with every dashboard found."""
    items = _items(message)
    lowered = text.lower()
    named = [i for i in items if str(i.get("title") or "").lower() in lowered and i.get("title")]
    if named:
        return max(named, key=lambda i: len(str(i["title"]))), items
    return (items[0] if len(items) == 1 else None), items


def found(after: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    """The dashboards of the turn's search results (what the help names)."""
    return [
        item
        for message in after
        if isinstance(message, ToolMessage) and message.name == SEARCH_DASHBOARDS
        for item in _items(message)
    ]


def is_lookup(after: Sequence[BaseMessage], call: Call) -> bool:
    """Whether the turn's first tool call was this lookup."""
    first = next((m for m in after if isinstance(m, AIMessage) and m.tool_calls), None)
    if first is None:
        return False
    made = first.tool_calls[0]
    return made["name"] == call.name and made["args"] == call.args


def named(item: dict[str, Any]) -> str:
    return f"{item.get('title')} (id {item.get('id')})"


def with_id(step: str, dashboard_id: int) -> str:
    """The request again, with the dashboard found named by id (routing understands that)."""
    return f"{step.rstrip()} (dashboard {dashboard_id})"


def not_found(words: str, items: list[dict[str, Any]], lang: str) -> str:
    """No single dashboard has that title: say so, and name the candidates."""
    if not items:
        if lang == "ru":
            return f"Дашборда с названием «{words}» не нашлось. Проверьте название."
        return f'No dashboard is called "{words}". Check the title.'
    titles = "\n".join(f"- {i.get('title')} (id {i.get('id')})" for i in items[:5])
    if lang == "ru":
        return f"Под «{words}» подходят несколько дашбордов; какой из них?\n{titles}"
    return f'Several dashboards match "{words}"; which one?\n{titles}'
