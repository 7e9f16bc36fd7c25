"""An offline token estimate for a call the model reported no usage for (a stopped stream, the
demo model): about four characters a token, the usual figure for English and code. No
tokenizer is downloaded; the estimate is marked `estimated` wherever it is shown."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from langchain_core.messages import BaseMessage

CHARS_PER_TOKEN = 4


def tokens_of_chars(chars: int) -> int:
    """Tokens for `chars` characters, rounded up (a started call counts at least one)."""
    return max(1, -(-chars // CHARS_PER_TOKEN)) if chars > 0 else 0


def chars_of(messages: Iterable[BaseMessage]) -> int:
    """The characters a model reads in `messages`: their text and tool calls."""
    total = 0
    for message in messages:
        total += len(_text(message.content))
        for call in getattr(message, "tool_calls", None) or []:
            total += len(json.dumps(call.get("args", {}), ensure_ascii=False)) + len(call["name"])
    return total


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part if isinstance(part, str) else str(part.get("text", ""))
            for part in content
            if isinstance(part, str | dict)
        )
    return str(content or "")
