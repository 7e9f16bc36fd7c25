"""Checkpoint soak: thousands of turns over a handful of threads, with checkpoint retention and
without, printing checkpoint rows and bytes per thread as the turns go by.

Each turn runs through the agent's own compiled graph (`agent.graph.build_agent`: create_agent
with our middleware and the Postgres checkpointer, AsyncPostgresSaver), not through the Gradio
route (the full stack runs about 2 turns a second on the shared 2-core machine): every third
turn the model calls a tool, then answers. The model is an in-process scripted chat model
(`--model scripted`, the default), or the real ChatOpenAI client against the scripted
OpenAI-compatible LLM server of the tests (`--model http`, about half as fast); the checkpoints
are the same either way. The tool is a local one (a ~300-byte JSON result, like the
backend's) instead of the backend's, so no backend process is in the loop: the checkpoints a
turn writes are the same as the product's. With retention, the backend's sweep
(`backend.retention.sweep`, the periodic job's body) runs every `--sweep-every` turns.

Per thread: rows of checkpoints + checkpoint_blobs + checkpoint_writes, and bytes as the sum of
pg_column_size of the stored values (after TOAST compression), measured just before a sweep (the
most a thread holds between two sweeps) and just after it; the three tables'
pg_total_relation_size (all threads of the database, dead rows, indexes and free space included:
the disk they take); and "state KiB", the size of the one messages blob the latest checkpoint
reads: the thread's live state, which grows with its conversation whatever retention does.
"elapsed s" includes the measurements (slow on large tables).

    uv run python bench/checkpoint_soak.py [--threads 6] [--turns 2400] [--keep 10]
        [--sweep-every 60] [--report-every 300]

Postgres: TEST_DATABASE_URL's server (a scratch database is created and dropped), else embedded.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from langchain_core.language_models import BaseChatModel  # noqa: E402
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage  # noqa: E402
from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from sqlalchemy import text  # noqa: E402

from agent.config import Settings as AgentSettings  # noqa: E402
from agent.context import Context  # noqa: E402
from agent.graph import build_agent, build_model, close_model, open_checkpointer  # noqa: E402
from backend.config import RetentionSettings  # noqa: E402
from backend.db import create_engine  # noqa: E402
from backend.migrate import upgrade  # noqa: E402
from backend.retention.sweep import sweep  # noqa: E402
from tests.fakes.llm_server import FakeLLM  # noqa: E402
from tests.support import db  # noqa: E402

ANSWER = (
    "Dashboard 42 (Revenue overview) is healthy: its three charts validate, the last deploy to "
    "staging went through, and the orders table it reads was refreshed an hour ago."
)

PER_THREAD = """
SELECT t.thread_id,
    (SELECT count(*) FROM checkpoints WHERE thread_id = t.thread_id) AS checkpoints,
    (SELECT count(*) FROM checkpoint_blobs WHERE thread_id = t.thread_id) AS blobs,
    (SELECT count(*) FROM checkpoint_writes WHERE thread_id = t.thread_id) AS writes,
    (SELECT coalesce(sum(pg_column_size(checkpoint) + pg_column_size(metadata)), 0)
        FROM checkpoints WHERE thread_id = t.thread_id)
    + (SELECT coalesce(sum(pg_column_size(blob)), 0)
        FROM checkpoint_blobs WHERE thread_id = t.thread_id)
    + (SELECT coalesce(sum(pg_column_size(blob)), 0)
        FROM checkpoint_writes WHERE thread_id = t.thread_id) AS bytes,
    (SELECT pg_column_size(b.blob)
        FROM (SELECT checkpoint FROM checkpoints WHERE thread_id = t.thread_id
            AND checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1) AS c
        JOIN checkpoint_blobs b ON b.thread_id = t.thread_id AND b.checkpoint_ns = ''
        AND b.channel = 'messages' AND b.version = c.checkpoint -> 'channel_versions' ->> 'messages'
    ) AS state
FROM unnest(CAST(:threads AS text[])) AS t(thread_id)
"""
TABLE_SIZES = """
SELECT pg_total_relation_size('checkpoints') + pg_total_relation_size('checkpoint_blobs')
    + pg_total_relation_size('checkpoint_writes')
"""


class ScriptedModel(BaseChatModel):
    """Asked to look something up, calls `lookup_note`; otherwise (and after the tool) answers."""

    @property
    def _llm_type(self) -> str:
        return "scripted-soak"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        last = messages[-1]
        if isinstance(last, HumanMessage) and "look up the note" in str(last.content):
            call = {
                "name": "lookup_note",
                "args": {"topic": "dashboard 42"},
                "id": f"call_{uuid.uuid4().hex[:12]}",
                "type": "tool_call",
            }
            reply = AIMessage(content="", tool_calls=[call], id=str(uuid.uuid4()))
        else:
            reply = AIMessage(content=ANSWER, id=str(uuid.uuid4()))
        return ChatResult(generations=[ChatGeneration(message=reply)])


@tool
def lookup_note(topic: str) -> str:
    """Look up the operations note on a topic."""
    return json.dumps(
        {
            "topic": topic,
            "status": "ok",
            "checked_at": "2026-12-01T10:00:00Z",
            "charts": [{"key": f"chart_{i}", "rows": 120 + i, "ok": True} for i in range(5)],
        }
    )


async def _conversations(engine: Any, n: int) -> list[str]:
    """`n` conversations of one bench user (the sweep considers live conversations only)."""
    async with engine.begin() as conn:
        user = await conn.scalar(
            text(
                "INSERT INTO users (id, username, password_hash, roles, is_active, created_at,"
                " updated_at) VALUES (gen_random_uuid(), :name, 'x', ARRAY['viewer'], true,"
                " now(), now()) RETURNING id"
            ),
            {"name": f"soak-{uuid.uuid4().hex[:8]}"},
        )
        ids = [str(uuid.uuid4()) for _ in range(n)]
        for cid in ids:
            await conn.execute(
                text(
                    "INSERT INTO agent_conversations (id, owner_id, title, message_count,"
                    " is_archived, created_at, updated_at)"
                    " VALUES (CAST(:id AS uuid), :owner, 'soak', 0, false, now(), now())"
                ),
                {"id": cid, "owner": user},
            )
    return ids


async def _measure(engine: Any, threads: list[str]) -> dict[str, float]:
    """Per thread on average (and the largest), and the tables' size on disk."""
    async with engine.connect() as conn:
        rows = (await conn.execute(text(PER_THREAD), {"threads": threads})).all()
        tables = int(await conn.scalar(text(TABLE_SIZES))) / 2**20
    counts = [int(r.checkpoints + r.blobs + r.writes) for r in rows]
    sizes = [int(r.bytes) / 1024 for r in rows]
    return {
        "rows": sum(counts) / len(counts),
        "max_rows": max(counts),
        "kb": sum(sizes) / len(sizes),
        "max_kb": max(sizes),
        "state_kb": sum(int(r.state or 0) for r in rows) / len(rows) / 1024,
        "tables_mb": tables,
    }


async def soak(args: argparse.Namespace, url: str, fake: FakeLLM, retention: bool) -> list[dict]:
    """One run of `args.turns` turns round-robin over fresh threads; the figures over time."""
    settings = AgentSettings(
        llm_api_base=fake.url, llm_api_key="fake", database_url=url, env="development"
    )
    engine = create_engine(url, pool_size=2)
    threads = await _conversations(engine, args.threads)
    keep = RetentionSettings(
        keep_latest=args.keep, idle_ttl_s=0, batch_size=200, vacuum=not args.no_vacuum
    )
    figures: list[dict] = []
    started = time.monotonic()
    async with open_checkpointer(url) as saver:
        model = build_model(settings) if args.model == "http" else ScriptedModel()
        agent = build_agent(settings, model=model, tools=[lookup_note], checkpointer=saver)
        for turn in range(1, args.turns + 1):
            cid = threads[turn % len(threads)]
            context = Context(
                user_token="-", user_id="-", username="soak", roles=("viewer",), conversation_id=cid
            )
            question = f"turn {turn}: " + (
                "look up the note on dashboard 42"
                if (turn // len(threads)) % 3 == 0
                else "how is dashboard 42 doing?"
            )
            await agent.ainvoke(
                {"messages": [HumanMessage(content=question, id=str(uuid.uuid4()))]},
                {"configurable": {"thread_id": cid}, "recursion_limit": 100},
                context=context,
            )
            # Measured before the sweep of the same turn (the most a thread holds between two
            # sweeps) and after it.
            report = turn % args.report_every == 0
            if report:
                before = await _measure(engine, threads)
            if retention and turn % args.sweep_every == 0:
                await sweep(engine, keep)
            if report:
                after = await _measure(engine, threads) if retention else before
                figures.append(
                    {
                        **before,
                        "turn": turn,
                        "turns_per_thread": turn // len(threads),
                        "rows_after": after["rows"],
                        "kb_after": after["kb"],
                        "tables_after": after["tables_mb"],
                        "elapsed_s": time.monotonic() - started,
                    }
                )
        await close_model(model)
    await engine.dispose()
    return figures


def _print(label: str, figures: list[dict]) -> None:
    print(f"\n{label}")
    print(
        f"{'turns':>6} {'/thread':>7} | {'rows/thread':>11} {'max':>5} {'KiB/thread':>10} "
        f"{'max':>7} {'tables MiB':>10} | {'after sweep: rows':>17} {'KiB':>7} {'MiB':>6} | "
        f"{'state KiB':>9} {'elapsed s':>9}"
    )
    for f in figures:
        print(
            f"{f['turn']:>6} {f['turns_per_thread']:>7} | {f['rows']:>11.0f} {f['max_rows']:>5} "
            f"{f['kb']:>10.1f} {f['max_kb']:>7.1f} {f['tables_mb']:>10.1f} | "
            f"{f['rows_after']:>17.0f} {f['kb_after']:>7.1f} {f['tables_after']:>6.1f} | "
            f"{f['state_kb']:>9.1f} {f['elapsed_s']:>9.1f}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=6)
    parser.add_argument("--turns", type=int, default=2400, help="turns of each run, all threads")
    parser.add_argument("--keep", type=int, default=10, help="retention.keep_latest")
    parser.add_argument("--sweep-every", type=int, default=60)
    parser.add_argument("--report-every", type=int, default=300)
    parser.add_argument("--model", choices=("scripted", "http"), default="scripted")
    parser.add_argument("--no-vacuum", action="store_true", help="retention.vacuum = false")
    args = parser.parse_args()
    print(
        f"{args.turns} turns over {args.threads} threads per run (every third turn a tool "
        f"call), compiled agent graph, {args.model} model; each run on its own database"
    )
    fake = FakeLLM().start()  # for --model http
    fake.script.load({"default": {"text": ANSWER}})
    fake.add_rule(
        "look up the note",
        {"tool_calls": [{"name": "lookup_note", "args": {"topic": "dashboard 42"}}]},
    )
    runs = {
        f"with retention (keep_latest={args.keep}, vacuum={not args.no_vacuum}, "
        f"a sweep every {args.sweep_every} turns)": True,
        "without retention": False,
    }
    # Both runs in one event loop (ChatOpenAI keeps one HTTP client per process), each on a
    # database of its own.
    admin = db.server_url()
    urls = [db.create_database(admin) for _ in runs]
    try:
        for url in urls:
            upgrade(url)

        async def both() -> None:
            for (label, retention), url in zip(runs.items(), urls, strict=True):
                _print(label, await soak(args, url, fake, retention=retention))

        asyncio.run(both())
    finally:
        fake.stop()
        for url in urls:
            db.drop_database(admin, url)


if __name__ == "__main__":
    main()
