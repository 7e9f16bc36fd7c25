"""The agent's messages checkpointed as deltas (agent/perf/delta_state.py), on the real Postgres
checkpointer: each message stored once, a thread read back exactly (by this process and by a
fresh one), a thread written before the change resumed with its history and its pending
confirmation, and
retention pruning a delta thread to its latest checkpoints without losing a message. The graph is
the agent's own (build_agent: our middleware, HumanInTheLoop), run in-process with a scripted
model and local tools: the checkpoints are the product's, no processes are needed."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import psycopg
import pytest
from langchain.agents import AgentState
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.channels.delta import DeltaChannel

from agent.config import Settings
from agent.context import Context
from agent.graph import build_agent, open_checkpointer, recursion_limit
from agent.hitl import pending_of, resolve
from agent.perf.delta_state import delta_state
from backend.db import create_engine
from backend.retention import thread as retention
from tests.agent.unit.scripted import ScriptedModel, say

DEPLOY = {"dashboard_id": 7, "ref": "main", "environment": "prod"}
BIG_MARK = "row-of-a-large-result"
RAN: list[str] = []


@tool("execute_sql")
async def execute_sql(query: str) -> dict[str, Any]:
    """Run a read-only query."""
    RAN.append(f"sql:{query}")
    if query == "big":  # ~200 KB of rows, as a result near the backend's cap would be
        return {"rows": [[i, f"{BIG_MARK}-{i:06d}", "x" * 180] for i in range(1000)]}
    return {"rows": [[1, query]]}


@tool("deploy_dashboard")
async def deploy_dashboard(dashboard_id: int, ref: str, environment: str) -> dict[str, Any]:
    """Deploy a dashboard."""
    RAN.append(f"deploy:{dashboard_id}")
    return {"deployed": dashboard_id}


@pytest.fixture(autouse=True)
def _nothing_ran() -> None:
    RAN.clear()


@pytest.fixture()
def thread(sql: psycopg.Connection) -> str:
    """A conversation of a user of its own (retention holds its lease row, which needs one)."""
    user = sql.execute(
        "insert into users (id, username, password_hash, roles, is_active, created_at,"
        " updated_at) values (gen_random_uuid(), %s, 'x', array['viewer'], true, now(), now())"
        " returning id",
        (f"delta-{uuid.uuid4().hex[:8]}",),
    ).fetchone()[0]
    cid = str(uuid.uuid4())
    sql.execute(
        "insert into agent_conversations (id, owner_id, title, message_count, is_archived,"
        " created_at, updated_at) values (%s, %s, 'delta', 0, false, now(), now())",
        (cid, user),
    )
    return cid


def context(cid: str) -> Context:
    return Context(
        user_token="jwt", user_id="1", username="admin", roles=("admin",), conversation_id=cid
    )


class Thread:
    """One conversation driven through the agent graph of a given state schema."""

    def __init__(self, url: str, cid: str, state: type[AgentState[Any]] | None = None) -> None:
        self.url, self.cid, self.state = url, cid, state
        self.config: dict[str, Any] = {
            "configurable": {"thread_id": cid},
            "recursion_limit": recursion_limit(Settings()),
        }

    async def run(self, script: list[AIMessage], value: Any) -> tuple[list[BaseMessage], Any]:
        """Run the graph once on a checkpointer of its own (a fresh process's view); the
        thread's messages and state afterwards, and what the model was sent last."""
        model = ScriptedModel(script=list(script), seen=[])
        async with open_checkpointer(self.url) as saver:
            graph = build_agent(
                Settings(),
                model=model,
                tools=[execute_sql, deploy_dashboard],
                checkpointer=saver,
                state=self.state,
            )
            if value is not None:
                async for _ in graph.astream(
                    value, self.config, context=context(self.cid), durability="sync"
                ):
                    pass
            snapshot = await graph.aget_state(self.config)
        assert not model.script, "the model was called less often than scripted"
        return list(snapshot.values.get("messages", [])), snapshot

    def ask(self, text: str, *script: AIMessage) -> tuple[list[BaseMessage], Any]:
        question = HumanMessage(content=text, id=str(uuid.uuid4()))
        return asyncio.run(self.run(list(script), {"messages": [question]}))

    def resume(self, command: Any, *script: AIMessage) -> tuple[list[BaseMessage], Any]:
        return asyncio.run(self.run(list(script), command))

    def read(self) -> tuple[list[BaseMessage], Any]:
        return asyncio.run(self.run([], None))


def tool_turn(t: Thread, i: int, query: str | None = None) -> list[BaseMessage]:
    call = ("execute_sql", f"call_{i}_{uuid.uuid4().hex[:6]}", {"query": query or f"q{i}"})
    messages, _ = t.ask(f"question {i}", say("", call), say(f"answer {i}"))
    return messages


def shapes(messages: list[BaseMessage]) -> list[tuple[str, str, Any]]:
    return [(m.type, str(m.id), m.content) for m in messages]


def occurrences(sql: psycopg.Connection, table: str, cid: str, mark: str) -> int:
    return int(
        sql.execute(
            f"select count(*) from {table} where thread_id = %s"
            " and position(convert_to(%s, 'UTF8') in blob) > 0",
            (cid, mark),
        ).fetchone()[0]
    )


def test_the_state_schema_is_a_delta_channel_with_the_libraries_own_message_reducer():
    # Fails loudly when LangGraph's beta DeltaChannel or its batch reducer changes under us.
    from langgraph.graph.message import _messages_delta_reducer

    graph = build_agent(Settings(), model=ScriptedModel(script=[]), tools=[], checkpointer=None)
    channel = graph.channels["messages"]
    assert isinstance(channel, DeltaChannel) and channel.reducer is _messages_delta_reducer
    assert channel.snapshot_frequency == Settings().agent.snapshot_every


def test_a_large_tool_result_is_stored_once_and_the_thread_reads_back_exactly(
    database_url, sql, thread
):
    t = Thread(database_url, thread)
    expected: list[BaseMessage] = []
    for i in range(6):
        expected = tool_turn(t, i, query="big" if i == 1 else None)

    assert len(expected) == 24 and RAN[1] == "sql:big"
    # The ~200 KB result: one write row, no blob (before: a blob in every later checkpoint).
    assert occurrences(sql, "checkpoint_writes", thread, f"{BIG_MARK}-000999") == 1
    assert occurrences(sql, "checkpoint_blobs", thread, f"{BIG_MARK}-000999") == 0
    # Read back by a fresh checkpointer and graph: the same messages, ids and contents.
    again, snapshot = t.read()
    assert shapes(again) == shapes(expected)
    big = next(m for m in again if isinstance(m, ToolMessage) and BIG_MARK in str(m.content))
    assert len(json.loads(str(big.content))["rows"]) == 1000
    # The next turn's model is sent the whole history (within its input budget).
    tool_turn(t, 6)
    assert snapshot.created_at is not None


def test_a_snapshot_is_written_every_n_updates_and_reads_from_it_match(database_url, sql, thread):
    t = Thread(database_url, thread, delta_state(4))  # a tool turn writes four
    for i in range(5):
        expected = tool_turn(t, i)

    snapshots = sql.execute(
        "select count(*) from checkpoints where thread_id = %s"
        " and checkpoint -> 'channel_values' -> 'messages' = 'true'::jsonb",
        (thread,),
    ).fetchone()[0]
    assert snapshots >= 4
    assert shapes(t.read()[0]) == shapes(expected)


def test_a_thread_written_before_the_change_resumes_with_its_history_and_confirmation(
    database_url, sql, thread
):
    old = Thread(database_url, thread, AgentState)  # create_agent's own schema: full copies
    tool_turn(old, 0)
    before, _ = old.ask("deploy 7", say("Deploying.", ("deploy_dashboard", "call_d", DEPLOY)))
    plain = sql.execute(
        "select count(*) from checkpoint_blobs where thread_id = %s and channel = 'messages'",
        (thread,),
    ).fetchone()[0]
    assert plain > 0  # the old layout: the list stored whole

    new = Thread(database_url, thread)  # the upgrade: same thread, the delta schema
    read, snapshot = new.read()
    assert shapes(read) == shapes(before)
    _, command = resolve(snapshot, "confirm", "call_d")
    after, _ = new.resume(command, say("Deployed."))

    assert RAN[-1] == "deploy:7"
    assert shapes(after[: len(before)]) == shapes(before)
    assert [m.type for m in after[len(before) :]] == ["tool", "ai"]
    assert after[-1].content == "Deployed." and not pending_of(new.read()[1])
    later = tool_turn(new, 2)
    assert shapes(later[: len(after)]) == shapes(after) and len(later) == len(after) + 4
    assert shapes(new.read()[0]) == shapes(later)


def prune(database_url: str, cid: str, keep: int) -> retention.Outcome:
    async def once() -> retention.Outcome:
        engine = create_engine(database_url, pool_size=1)
        try:
            async with engine.connect() as base:
                conn = await base.execution_options(isolation_level="REPEATABLE READ")
                return await retention.apply(
                    conn,
                    thread_id=cid,
                    keep_latest=keep,
                    idle_ttl_s=0,
                    holder="test-retention",
                    lock_timeout_s=5,
                )
        finally:
            await engine.dispose()

    return asyncio.run(once())


def count(sql: psycopg.Connection, cid: str) -> int:
    return int(
        sql.execute("select count(*) from checkpoints where thread_id = %s", (cid,)).fetchone()[0]
    )


def test_retention_prunes_a_delta_thread_back_to_its_snapshot_and_it_restores_exactly(
    database_url, sql, thread
):
    t = Thread(database_url, thread, delta_state(6))
    for i in range(5):  # 20 updates: snapshots at 6, 12 and 18, then two more
        expected = tool_turn(t, i)
    before = count(sql, thread)

    outcome = prune(database_url, thread, keep=2)

    kept = count(sql, thread)
    assert outcome.action == "pruned" and 2 < kept < before  # back to a snapshot, no further
    seeded = sql.execute(
        "select exists (select 1 from checkpoint_blobs b where b.thread_id = c.thread_id"
        " and b.channel = 'messages' and b.version = c.checkpoint -> 'channel_versions' ->> "
        "'messages') from checkpoints c where thread_id = %s order by checkpoint_id limit 1",
        (thread,),
    ).fetchone()[0]
    assert seeded  # the oldest checkpoint kept reads a snapshot's blob: the replay's seed
    assert shapes(t.read()[0]) == shapes(expected)
    # It goes on as ever, and prunes again.
    later = tool_turn(t, 5)
    assert shapes(later[: len(expected)]) == shapes(expected)
    assert prune(database_url, thread, keep=2).action in ("pruned", "kept")
    assert shapes(t.read()[0]) == shapes(later)


def test_retention_keeps_a_delta_thread_that_has_no_snapshot_yet_whole(database_url, sql, thread):
    t = Thread(database_url, thread)  # the product's frequency: no snapshot in three turns
    for i in range(3):
        expected = tool_turn(t, i)
    before = count(sql, thread)

    outcome = prune(database_url, thread, keep=2)

    assert outcome.action == "kept" and count(sql, thread) == before
    assert shapes(t.read()[0]) == shapes(expected)


def test_retention_prunes_a_thread_written_before_the_change_and_it_resumes_as_a_delta_one(
    database_url, sql, thread
):
    old = Thread(database_url, thread, AgentState)
    for i in range(3):
        expected = tool_turn(old, i)
    assert prune(database_url, thread, keep=2).action == "pruned"
    assert count(sql, thread) == 2

    new = Thread(database_url, thread)
    later = tool_turn(new, 3)
    assert shapes(later[: len(expected)]) == shapes(expected)
    # The plain list the old checkpoint holds is the seed the new ones replay from: kept.
    assert prune(database_url, thread, keep=2).action in ("pruned", "kept")
    assert shapes(new.read()[0]) == shapes(later)


@pytest.mark.parametrize("snapshot_every", [400, 6])
def test_one_process_reading_its_thread_turn_after_turn_gets_what_a_fresh_one_reads(
    database_url, thread, snapshot_every
):
    """The saver's remembered histories (agent/perf/delta_replay.py): extended turn by turn, across
    snapshots (every 6 updates: at most every other turn) and a confirmation, always equal to
    the library's read."""
    state = delta_state(snapshot_every)
    fresh = Thread(database_url, thread, state)

    async def talk() -> list[tuple[str, str, Any]]:
        script = []
        for i in range(4):
            call = ("execute_sql", f"call_{i}", {"query": f"q{i}"})
            script += [say("", call), say(f"answer {i}")]
        script += [say("", ("deploy_dashboard", "call_d", DEPLOY)), say("Deployed.")]
        model = ScriptedModel(script=script, seen=[])
        async with open_checkpointer(database_url) as saver:
            graph = build_agent(
                Settings(),
                model=model,
                tools=[execute_sql, deploy_dashboard],
                checkpointer=saver,
                state=state,
            )
            values: list[Any] = [
                {"messages": [HumanMessage(content=f"question {i}", id=f"h{i}")]} for i in range(5)
            ]
            for value in values:
                async for _ in graph.astream(
                    value, fresh.config, context=context(thread), durability="sync"
                ):
                    pass
                here = await graph.aget_state(fresh.config)
                elsewhere, _ = await fresh.run([], None)  # a checkpointer of its own
                assert shapes(here.values["messages"]) == shapes(elsewhere)
            known = saver.histories.get((thread, "", "messages"))
            assert known is not None  # the reads above went through what it remembers
            _, command = resolve(here, "confirm", "call_d")
            async for _ in graph.astream(
                command, fresh.config, context=context(thread), durability="sync"
            ):
                pass
            after = await graph.aget_state(fresh.config)
            return shapes(after.values["messages"])

    final = asyncio.run(talk())

    assert RAN[-1] == "deploy:7" and final[-1][2] == "Deployed."
    assert final == shapes(fresh.read()[0]) and len(final) == 4 * 4 + 4
