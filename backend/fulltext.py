"""Postgres full-text queries built from what a person typed (dashboards, conversations)."""

from __future__ import annotations

import re

WORD = re.compile(r"[^\W_]+")
MAX_TERMS = 16
PREFIX_MIN_CHARS = 3


def ts_query(text: str) -> str | None:
    """Words of `text` ANDed as a 'simple' tsquery; words of 3+ chars also match as prefixes,
    so "продаж" finds "продажи". Only letters and digits reach the query: no tsquery syntax."""
    words = [w.lower() for w in WORD.findall(text)][:MAX_TERMS]
    if not words:
        return None
    return " & ".join(f"{w}:*" if len(w) >= PREFIX_MIN_CHARS else w for w in words)
