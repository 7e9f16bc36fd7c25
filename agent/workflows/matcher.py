"""Choosing a workflow for a message by its trigger keywords, in Russian and English.

Words are compared by their Snowball stems (so "таблицы" matches the keyword "таблица" and
"errors" matches "error"); a keyword matches when every one of its words occurs in the message.
The workflow with the longest matching keyword wins; ties go to the first in file order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

import snowballstemmer

from agent.workflows.definitions import Definition

_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)?")
_CYRILLIC = re.compile(r"[\u0430-\u044f\u0451]")


@lru_cache(maxsize=2)
def _stemmer(language: str) -> snowballstemmer.stemmer:
    return snowballstemmer.stemmer(language)


def stems(text: str) -> list[str]:
    """The stems of the words of `text` (casefolded, yo read as ye)."""
    words = _WORD.findall(text.casefold().replace("\u0451", "\u0435"))
    return [
        _stemmer("russian" if _CYRILLIC.search(w) else "english").stemWord(w.replace("\u2019", "'"))
        for w in words
    ]


def match(text: str, definitions: Sequence[Definition]) -> Definition | None:
    """The best workflow for `text`, or None when no keyword matches."""
    present = set(stems(text))
    best: tuple[int, Definition] | None = None
    for definition in definitions:
        for keyword in definition.trigger_keywords:
            words = stems(keyword)
            if words and set(words) <= present and (best is None or len(words) > best[0]):
                best = (len(words), definition)
    return best[1] if best else None


def language(text: str) -> str:
    """ "ru" when the text is mostly Cyrillic, else "en"."""
    letters = [c for c in text.casefold() if c.isalpha()]
    cyrillic = sum(1 for c in letters if _CYRILLIC.match(c))
    return "ru" if letters and cyrillic * 2 >= len(letters) else "en"
