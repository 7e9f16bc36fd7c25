"""Fit the model's input to a token budget without breaking tool-call/tool-result pairs.

Counting is approximate (about four characters a token, `count_tokens_approximately`), the
same rule everywhere, so the budget is a firm cap on what we send rather than an exact count.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
    trim_messages,
)
from langchain_core.messages.utils import count_tokens_approximately

TRUNCATION_MARK = " [...truncated]"
MIN_KEEP_CHARS = 200


def paired(messages: list[AnyMessage]) -> list[AnyMessage]:
    """`messages` with each tool result right after the AI message that called it, in its
    calls' order, and results of no call dropped: what a provider accepts. A thread is in this
    order already (the list comes back as it is) unless a result was added after newer
    messages (agent/hitl.py `closing_messages`, a call left open by a run that lost its lease).
    """
    results: dict[str, ToolMessage] = {}
    in_order = True
    expected: list[str] = []
    for message in messages:
        if isinstance(message, ToolMessage):
            results[message.tool_call_id] = message
            in_order = in_order and bool(expected) and expected.pop(0) == message.tool_call_id
        else:
            in_order = in_order and not expected
            expected = (
                [c["id"] or "" for c in message.tool_calls]
                if isinstance(message, AIMessage)
                else []
            )
    if in_order:
        return messages
    out: list[AnyMessage] = []
    for message in messages:
        if isinstance(message, ToolMessage):
            continue
        out.append(message)
        if isinstance(message, AIMessage):
            out += [results[c["id"]] for c in message.tool_calls if c["id"] in results]
    return out


def message_tokens(messages: Sequence[BaseMessage]) -> int:
    """The approximate token count of `messages`."""
    return int(count_tokens_approximately(messages))


def fit_to_budget(messages: list[AnyMessage], max_tokens: int) -> list[AnyMessage]:
    """The most recent messages that fit in `max_tokens`, starting on a person's message.

    Older turns are dropped whole. When the current turn alone does not fit, it is kept and its
    longest texts are shortened (marked) until it does, as far as that is possible.
    """
    tail = _tail_past(messages, max_tokens)
    if tail == 0:
        return messages
    last_human = _last_human_index(messages)
    kept = trim_messages(
        messages[tail - 1 :],
        max_tokens=max_tokens,
        token_counter=count_tokens_approximately,
        strategy="last",
        start_on="human",
        allow_partial=False,
    )
    if last_human is None or (kept and len(kept) >= len(messages) - last_human):
        return cast("list[AnyMessage]", kept)
    return _shrink(messages[last_human:], max_tokens)


def _tail_past(messages: Sequence[BaseMessage], max_tokens: int) -> int:
    """0 if `messages` fit in `max_tokens`, else 1 + the index of the newest message that does
    not fit with all those after it: nothing before it can be kept.

    The count is a sum over messages, so a long conversation is counted from its end only as
    far as the budget reaches, not whole (twice per model call, it grew with the thread).
    """
    used = 0
    for i in range(len(messages) - 1, -1, -1):
        used += message_tokens([messages[i]])
        if used > max_tokens:
            return i + 1
    return 0


def _last_human_index(messages: Sequence[BaseMessage]) -> int | None:
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], HumanMessage):
            return i
    return None


def _shrink(messages: list[AnyMessage], max_tokens: int) -> list[AnyMessage]:
    """Cut the longest string contents until the messages fit or cannot shrink further."""
    out = list(messages)
    while message_tokens(out) > max_tokens:
        sizes = [len(m.content) if isinstance(m.content, str) else 0 for m in out]
        longest = max(range(len(out)), key=sizes.__getitem__)
        if sizes[longest] <= MIN_KEEP_CHARS + len(TRUNCATION_MARK):
            break  # at the floor (a text cut once is that long): cutting again cannot shrink it
        text = str(out[longest].content)
        excess = (message_tokens(out) - max_tokens) * 4 + len(TRUNCATION_MARK)
        cut = max(MIN_KEEP_CHARS, len(text) - excess)
        out[longest] = out[longest].model_copy(update={"content": text[:cut] + TRUNCATION_MARK})
    return out
