"""LangSmith's `traceable` set-up run in place, not in a worker thread, while tracing is off.

Saves: ten thread round trips and five tasks before each model request, six and three around
each tool call (`create_agent` wraps every middleware hook in `traceable`, traced or not).
Bench: `uv run python bench/agent_load.py --levels 25 --targets agent1 --profile DIR`
(`aio_to_thread` and the executor's threads in the samples), `bench/agent_ttft.py --levels 1,25`.
Remove when: langchain stops wrapping middleware hooks in `traceable` while tracing is off,
or LangSmith runs its set-up in place by itself. The override is the library's documented one
(`langsmith.set_runtime_overrides(aio_to_thread=...)`); tests/agent/unit/test_perf_tricks.py
fails if it goes or `aio_to_thread` stops being called as `(default, ctx, func, ...)`.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import Any

import langsmith
from langsmith.utils import tracing_is_enabled


async def inline_unless_traced(
    default: Callable[..., Any],
    ctx: contextvars.Context,
    func: Callable[..., Any],
    /,
    *args: Any,
    **kwargs: Any,
) -> Any:
    """LangSmith's `aio_to_thread`, run in place while LangSmith tracing is off.

    `create_agent` wraps every middleware's `awrap_model_call` and `awrap_tool_call` in
    LangSmith's `traceable`, which sets up and closes its span in a worker thread, traced or
    not, and runs the hook in a task of its own: with our five model-call and three tool-call
    hooks, ten thread round trips and five tasks before each model call's request goes out.
    Untraced, the set-up only reads context variables, so it runs here, in `ctx` (the
    library's documented override); traced, the library's own thread hop is kept.
    """
    if ctx.run(tracing_is_enabled):
        return await default(ctx, func, *args, **kwargs)
    return ctx.run(func, *args, **kwargs)


def install() -> None:
    """Install the override (process-wide; installing it again changes nothing)."""
    langsmith.set_runtime_overrides(aio_to_thread=inline_unless_traced)
