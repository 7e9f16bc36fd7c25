"""Requests the demo turns down without a tool: secrets, and deleting things no tool deletes.

Charts are removed on a branch with a commit (the commit rule comes first); tables, dashboards,
users and data have no delete tool at all, so the honest answer is to say so.
"""

from __future__ import annotations

import re

from agent.demo.request import Ask, Request, Route

SECRET = r"secret|password|passwd|api[ _-]?key|\bjwt\b|credential|парол|секрет|токен"
HOW_TO = r"^(how|как)\b"
# "drop" only with what is dropped: "why did revenue drop?" is a question, not a request.
DESTROY = (
    r"\bdrop\s+(the\s+)?(table|column|database|schema|index|view|dashboard)"
    r"|\b(delete|truncate|wipe|erase|destroy)\b|удали|снеси|очисти|дропни"
)


def secrets(req: Request) -> Route:
    """Passwords, keys and tokens are never shown (a how-to about them is fine)."""
    if re.search(SECRET, req.text) is None or re.search(HOW_TO, req.text):
        return None
    return Ask("secret")


def destructive(req: Request) -> Route:
    """Delete, drop, truncate: nothing the agent can do; it says so instead of looking around."""
    return Ask("delete") if re.search(DESTROY, req.text) else None
