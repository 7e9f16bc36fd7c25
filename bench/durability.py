"""What `durability="sync"` costs a turn: the agent graph (our middleware, the Postgres
checkpointer) runs the same turns with sync and async checkpoint writes and prints the turn
time of each. A turn is a tool call and an answer (two model calls); the model is an in-process
script and the tool returns at once, so the figure is the checkpointing overhead alone, at its
largest share of a turn (a real model adds seconds).

    uv run python bench/durability.py [--turns 60]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.config import Settings
from agent.context import Context
from agent.graph import build_agent, open_checkpointer
from tests.support import db


class ScriptedModel(FakeMessagesListChatModel):
    """Answers a tool call, then a text, for ever; accepts tools."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


@tool
def lookup(key: str) -> str:
    """Return the value of `key`."""
    return f"value of {key}"


def script(turns: int) -> list[AIMessage]:
    out: list[AIMessage] = []
    for i in range(turns):
        call = {"name": "lookup", "args": {"key": f"k{i}"}, "id": f"call_{i}", "type": "tool_call"}
        out += [AIMessage(content="", tool_calls=[call]), AIMessage(content=f"Answer {i}.")]
    return out


async def run(database_url: str, turns: int) -> dict[str, list[float]]:
    settings = Settings()
    context = Context(
        user_token="bench", user_id="u", username="bench", roles=("admin",), conversation_id="c"
    )
    timings: dict[str, list[float]] = {"sync": [], "async": []}
    async with open_checkpointer(database_url) as saver:
        agents = {
            mode: build_agent(
                settings,
                model=ScriptedModel(responses=script(turns + 1)),
                tools=[lookup],
                checkpointer=saver,
            )
            for mode in timings
        }
        threads = {mode: {"configurable": {"thread_id": str(uuid.uuid4())}} for mode in timings}
        for i in range(turns + 1):  # the modes take turns (the machine's load drifts); turn 0
            order = list(timings) if i % 2 else list(timings)[::-1]  # of each is a warm-up
            for mode in order:
                started = time.perf_counter()
                async for _ in agents[mode].astream(
                    {"messages": [{"role": "user", "content": f"question {i}"}]},
                    threads[mode],  # type: ignore[arg-type]
                    context=context,
                    stream_mode=["messages", "updates"],
                    durability=mode,  # type: ignore[arg-type]
                ):
                    pass
                if i:
                    timings[mode].append((time.perf_counter() - started) * 1000)
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=60)
    args = parser.parse_args()
    admin = db.server_url()
    url = db.create_database(admin)
    try:
        timings = asyncio.run(run(url, args.turns))
    finally:
        db.drop_database(admin, url)
    print(f"{'durability':<11} {'turns':>5} {'p50 ms':>8} {'p95 ms':>8} {'mean ms':>8}")
    for mode, values in timings.items():
        p95 = statistics.quantiles(values, n=20)[-1]
        print(
            f"{mode:<11} {len(values):>5} {statistics.median(values):>8.1f} {p95:>8.1f}"
            f" {statistics.fmean(values):>8.1f}"
        )
    extra = statistics.median(timings["sync"]) - statistics.median(timings["async"])
    print(f"sync costs {extra:+.1f} ms per turn (median) with a tool call and two model calls")


if __name__ == "__main__":
    main()
