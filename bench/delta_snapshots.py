"""How often the agent's `messages` should be snapshotted (agent.snapshot_every).

One thread of N tool turns (a question, a tool call, its ~1 KB result, an answer) through the
agent's own compiled graph (`agent.graph.build_agent`, our middleware, the Postgres
checkpointer) with an in-process scripted model, once per layout: the library's full-copy
messages channel (the layout before the change) and DeltaChannel at each snapshot frequency
asked for. Per layout: the thread's checkpoint bytes (blobs + writes, and the checkpoints' own
rows) against the bytes of its messages (the list serialized once, as a snapshot stores it), and
what reading the thread's state costs cold (`aget_state` by a process that has not read the
thread before: the delta layout replays the writes since the last snapshot; its CPU and wall
time), median of `--reads` reads at the end, and the process's CPU per turn (first and last five
turns).

    uv run python bench/delta_snapshots.py [--turns 199] [--every 100,200,400,800] [--reads 20]

Postgres: TEST_DATABASE_URL's server (a scratch database per layout), else embedded.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from langchain.agents import AgentState  # noqa: E402
from langchain_core.language_models import BaseChatModel  # noqa: E402
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage  # noqa: E402
from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer  # noqa: E402

from agent.config import Settings  # noqa: E402
from agent.context import Context  # noqa: E402
from agent.graph import build_agent, open_checkpointer  # noqa: E402
from agent.perf.delta_replay import Histories  # noqa: E402
from agent.perf.delta_state import delta_state  # noqa: E402
from tests.support import db  # noqa: E402

BYTES = """
SELECT
    (SELECT coalesce(sum(pg_column_size(blob)), 0) FROM checkpoint_blobs WHERE thread_id = %(t)s)
        AS blobs,
    (SELECT coalesce(sum(pg_column_size(blob)), 0) FROM checkpoint_writes WHERE thread_id = %(t)s)
        AS writes,
    (SELECT coalesce(sum(pg_column_size(checkpoint) + pg_column_size(metadata)), 0)
        FROM checkpoints WHERE thread_id = %(t)s) AS checkpoints,
    (SELECT count(*) FROM checkpoints WHERE thread_id = %(t)s) AS count
"""
ANSWER = "Dashboard 7 (Sales) is healthy: its charts validate and its data is an hour old."


class ToolTurns(BaseChatModel):
    """Calls `search_dashboards` after a question, answers after its result."""

    @property
    def _llm_type(self) -> str:
        return "tool-turns"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        if isinstance(messages[-1], HumanMessage):
            call = {
                "name": "search_dashboards",
                "args": {"query": "sales"},
                "id": f"call_{uuid.uuid4().hex[:12]}",
                "type": "tool_call",
            }
            reply = AIMessage(content="", tool_calls=[call], id=str(uuid.uuid4()))
        else:
            reply = AIMessage(content=ANSWER, id=str(uuid.uuid4()))
        return ChatResult(generations=[ChatGeneration(message=reply)])


@tool
def search_dashboards(query: str) -> str:
    """Search dashboards."""
    items = [{"id": i, "title": f"Sales {i}", "owner": "ops", "charts": 5} for i in range(15)]
    return json.dumps({"query": query, "items": items})


async def one(url: str, state: type[AgentState[Any]], args: argparse.Namespace) -> dict:
    thread = str(uuid.uuid4())
    config: dict[str, Any] = {"configurable": {"thread_id": thread}, "recursion_limit": 100}
    async with open_checkpointer(url) as saver:
        agent = build_agent(
            Settings(),
            model=ToolTurns(),
            tools=[search_dashboards],
            checkpointer=saver,
            state=state,
        )
        cpu = []
        for turn in range(args.turns):
            started_cpu = time.process_time()
            context = Context(  # a run's own (its budgets are counted in it)
                user_token="-", user_id="-", username="b", roles=("viewer",), conversation_id=thread
            )
            question = HumanMessage(content=f"turn {turn}: how is sales?", id=str(uuid.uuid4()))
            await agent.ainvoke(
                {"messages": [question]}, config, context=context, durability="sync"
            )
            cpu.append(time.process_time() - started_cpu)
        reads, read_cpu = [], []
        for _ in range(args.reads):
            saver.histories = Histories()  # a cold read: what a restarted process or another
            started = time.perf_counter()  # replica pays (agent/perf/delta_replay.py spares others)
            started_cpu = time.process_time()
            snapshot = await agent.aget_state(config)
            reads.append(time.perf_counter() - started)
            read_cpu.append(time.process_time() - started_cpu)
        messages = snapshot.values["messages"]
        counters = (snapshot.metadata or {}).get("counters_since_delta_snapshot") or {}
        replayed = (counters.get("messages") or (0, 0))[0]
        async with saver.conn.connection() as conn:  # type: ignore[union-attr]
            row = await (await conn.execute(BYTES, {"t": thread})).fetchone()
    blobs, writes, checkpoints, count = (
        row[k] for k in ("blobs", "writes", "checkpoints", "count")
    )
    message_bytes = len(JsonPlusSerializer().dumps_typed(messages)[1])
    return {
        "messages": len(messages),
        "replayed": replayed,
        "message_kb": message_bytes / 1024,
        "blobs_kb": blobs / 1024,
        "writes_kb": writes / 1024,
        "rows_kb": checkpoints / 1024,
        "ratio": (blobs + writes) / message_bytes,
        "checkpoints": count,
        "read_ms": statistics.median(reads) * 1000,
        "read_cpu_ms": statistics.median(read_cpu) * 1000,
        "cpu_first": statistics.mean(cpu[:5]) * 1000,
        "cpu_last": statistics.mean(cpu[-5:]) * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=199)  # 796 updates: short of a snapshot
    parser.add_argument("--every", default="100,200,400,800")
    parser.add_argument("--reads", type=int, default=20)
    args = parser.parse_args()
    layouts: dict[str, type[AgentState[Any]]] = {"full copy (before)": AgentState}
    for every in (int(x) for x in args.every.split(",")):
        layouts[f"delta, snapshot every {every}"] = delta_state(every)
    print(f"one thread of {args.turns} tool turns per layout; read = aget_state, median")
    print(
        f"{'layout':<28} {'msgs':>5} {'msg KiB':>8} {'blobs KiB':>10} {'writes KiB':>10} "
        f"{'(b+w)/msg':>9} {'ckpt rows KiB':>13} {'replayed':>8} {'read CPU':>8} {'read ms':>8} "
        f"{'CPU/turn ms first 5':>19} {'last 5':>6}"
    )
    admin = db.server_url()
    for label, state in layouts.items():
        url = db.create_database(admin)
        try:
            f = asyncio.run(one(url, state, args))
        finally:
            db.drop_database(admin, url)
        print(
            f"{label:<28} {f['messages']:>5} {f['message_kb']:>8.1f} {f['blobs_kb']:>10.1f} "
            f"{f['writes_kb']:>10.1f} {f['ratio']:>9.2f} {f['rows_kb']:>13.1f} {f['replayed']:>8} "
            f"{f['read_cpu_ms']:>8.1f} "
            f"{f['read_ms']:>8.1f} {f['cpu_first']:>19.1f} {f['cpu_last']:>6.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
