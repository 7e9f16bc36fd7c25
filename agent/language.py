"""The person's language, for the few lines the agent itself writes to them (the confirmation
card's description): the submit's `Accept-Language` header, as the browser sets it to the
page's language (frontend/src/lib/chat.ts). Russian when Russian is preferred over English,
English otherwise; the model's answers follow the question, not this.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

Lang = Literal["en", "ru"]
LANGS: tuple[Lang, ...] = ("en", "ru")
DEFAULT: Lang = "en"
MAX_HEADER_CHARS = 500  # a longer header is not read (it is no browser's)


def _ranges(header: str) -> list[tuple[float, int, str]]:
    """(-quality, position, primary tag) of each range of an Accept-Language header."""
    ranked = []
    for position, item in enumerate(header.split(",")):
        tag, _, params = item.strip().partition(";")
        quality = 1.0
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        primary = tag.strip().split("-")[0].lower()
        if primary and quality > 0:
            ranked.append((-quality, position, primary))
    return sorted(ranked)


def from_header(header: str | None) -> Lang:
    """The first of our languages the header prefers; DEFAULT when it names neither."""
    if not header or len(header) > MAX_HEADER_CHARS:
        return DEFAULT
    for _, _, primary in _ranges(header):
        if primary in LANGS:
            return "ru" if primary == "ru" else "en"
    return DEFAULT


def from_headers(headers: Mapping[str, str]) -> Lang:
    """The language of a request's headers (any capitalisation of the name)."""
    for name, value in headers.items():
        if name.lower() == "accept-language":
            return from_header(value)
    return DEFAULT
