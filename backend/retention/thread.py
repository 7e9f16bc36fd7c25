"""One thread's retention, in one transaction that holds the thread's run lease.

LangGraph's Postgres checkpointer (langgraph-checkpoint-postgres) keeps three tables, each keyed
by (thread_id, checkpoint_ns, ...): `checkpoints` (one row per step; `checkpoint ->
'channel_versions'` names the version of every channel it reads), `checkpoint_blobs` (channel
values by (channel, version): a checkpoint reads blobs written at older steps for the channels
that did not change since) and `checkpoint_writes` (a step's pending writes, by checkpoint_id;
an interrupt, i.e. a confirmation waiting for a person, is a `__interrupt__` write on the
latest checkpoint).

Pruning keeps the latest N checkpoints of each namespace with their writes and every blob a kept
checkpoint references, and deletes a subgraph call's namespace with the root checkpoint it
started from; it follows `AsyncPostgresSaver.aprune(strategy="keep_latest")` (which keeps one
checkpoint, in its own transaction). Unlike it, it prunes threads that use a DeltaChannel (the
agent's messages, agent/perf/delta_state.py): it also keeps every checkpoint back to the
snapshot their messages are rebuilt from (backend/retention/replay.py).

The transaction first takes the thread's run lease (the backend's `agent_runs` row) as an
uncommitted row and deletes it again before it commits: a run that starts meanwhile waits on
that row for the few milliseconds of the prune, then takes its lease as usual, and a thread
whose lease a run holds is left alone. All statements read one snapshot (REPEATABLE READ).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from sqlalchemy import insert, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection

from backend.audit.models import AuditEvent
from backend.db import utcnow
from backend.retention import replay

Action = Literal["pruned", "cleared", "kept", "leased", "pending", "busy"]
# Lock wait, serialization failure, deadlock: another transaction has the thread right now.
BUSY_SQLSTATES = {"55P03", "40001", "40P01"}
GONE_SQLSTATE = "23503"  # the conversation was deleted since the sweep read its thread id
CLEARED_BY = "retention"  # the audit row's actor of an idle thread's clearing

HOLD_LEASE = text("""
INSERT INTO agent_runs (conversation_id, holder, acquired_at, expires_at)
VALUES (CAST(:tid AS uuid), :holder, now(), now() + interval '1 minute')
ON CONFLICT (conversation_id) DO UPDATE
SET holder = EXCLUDED.holder, acquired_at = EXCLUDED.acquired_at, expires_at = EXCLUDED.expires_at
WHERE agent_runs.expires_at < now()
RETURNING 1
""")
GIVE_BACK_LEASE = text(
    "DELETE FROM agent_runs WHERE conversation_id = CAST(:tid AS uuid) AND holder = :holder"
)

# Per namespace: its latest checkpoint, whether a confirmation waits on it (an `__interrupt__`
# write, langgraph's INTERRUPT channel), when it was saved,
# its format version, and (for a subgraph call) the root checkpoint the call started from.
HEADS = text("""
SELECT
    h.checkpoint_ns AS ns,
    h.checkpoint_id AS head,
    (c.checkpoint ->> 'ts')::timestamptz AS ts,
    COALESCE((c.checkpoint ->> 'v')::int, 0) AS v,
    EXISTS (
        SELECT 1 FROM checkpoint_writes w
        WHERE w.thread_id = :tid AND w.checkpoint_ns = h.checkpoint_ns
        AND w.checkpoint_id = h.checkpoint_id AND w.channel = '__interrupt__'
    ) AS interrupted,
    c.metadata -> 'parents' ->> '' AS root,
    EXISTS (
        SELECT 1 FROM checkpoints r
        WHERE r.thread_id = :tid AND r.checkpoint_ns = ''
        AND r.checkpoint_id = c.metadata -> 'parents' ->> ''
    ) AS root_saved
FROM (
    SELECT DISTINCT ON (checkpoint_ns) checkpoint_ns, checkpoint_id
    FROM checkpoints WHERE thread_id = :tid
    ORDER BY checkpoint_ns, checkpoint_id DESC
) AS h
JOIN checkpoints c
    ON c.thread_id = :tid AND c.checkpoint_ns = h.checkpoint_ns
    AND c.checkpoint_id = h.checkpoint_id
""")

LATEST = text("""
SELECT checkpoint_id FROM checkpoints
WHERE thread_id = :tid AND checkpoint_ns = :ns
ORDER BY checkpoint_id DESC LIMIT :n
""")
UNKEPT = text("""
SELECT checkpoint_id FROM checkpoints
WHERE thread_id = :tid AND checkpoint_ns = :ns AND checkpoint_id <> ALL(CAST(:kept AS text[]))
""")
# Writes go by the checkpoints deleted, never "all but the kept": a run saves a step's writes in
# the background, and they can commit before their checkpoint does.
DELETE_WRITES = text("""
DELETE FROM checkpoint_writes
WHERE thread_id = :tid AND checkpoint_ns = :ns AND checkpoint_id = ANY(CAST(:ids AS text[]))
""")
DELETE_CHECKPOINTS = text("""
WITH deleted AS (
    DELETE FROM checkpoints
    WHERE thread_id = :tid AND checkpoint_ns = :ns AND checkpoint_id = ANY(CAST(:ids AS text[]))
    RETURNING checkpoint -> 'channel_versions' AS versions
)
SELECT DISTINCT v.key AS channel, v.value AS version
FROM deleted CROSS JOIN LATERAL jsonb_each_text(deleted.versions) AS v
""")
# The oldest kept checkpoint loses its deleted parent (as LangGraph's own prune does).
ORPHAN_PARENTS = text("""
UPDATE checkpoints SET parent_checkpoint_id = NULL
WHERE thread_id = :tid AND checkpoint_ns = :ns
AND parent_checkpoint_id = ANY(CAST(:ids AS text[]))
""")
REFERENCED = text("""
SELECT DISTINCT v.key AS channel, v.value AS version
FROM checkpoints c CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') AS v
WHERE c.thread_id = :tid AND c.checkpoint_ns = :ns
""")
DELETE_BLOBS = text("""
DELETE FROM checkpoint_blobs b
USING unnest(CAST(:channels AS text[]), CAST(:versions AS text[])) AS g(channel, version)
WHERE b.thread_id = :tid AND b.checkpoint_ns = :ns
AND b.channel = g.channel AND b.version = g.version
""")
TABLES = ("checkpoint_writes", "checkpoint_blobs", "checkpoints")
CLEAR = tuple(text(f"DELETE FROM {t} WHERE thread_id = :tid") for t in TABLES)  # noqa: S608
CLEAR_NAMESPACE = tuple(
    text(f"DELETE FROM {t} WHERE thread_id = :tid AND checkpoint_ns = :ns")  # noqa: S608
    for t in TABLES
)


@dataclass
class Outcome:
    """What retention did to one thread, and how many rows it deleted."""

    action: Action
    checkpoints: int = 0
    blobs: int = 0
    writes: int = 0


@dataclass(frozen=True)
class Head:
    ns: str
    head: str
    ts: datetime | None
    v: int
    interrupted: bool
    root: str | None
    root_saved: bool


async def apply(
    conn: AsyncConnection,
    *,
    thread_id: str,
    keep_latest: int,
    idle_ttl_s: float,
    holder: str,
    lock_timeout_s: float,
) -> Outcome:
    """Prune the thread to its latest `keep_latest` checkpoints, or clear it when idle longer
    than `idle_ttl_s` (0: never); a leased thread or one waiting for a confirmation is left."""
    try:
        async with conn.begin():
            # A literal: SET takes no bind parameters.
            await conn.execute(text(f"SET LOCAL lock_timeout = '{int(lock_timeout_s * 1000)}ms'"))
            if (
                await conn.execute(HOLD_LEASE, {"tid": thread_id, "holder": holder})
            ).first() is None:
                return Outcome("leased")
            outcome = await _retain(conn, thread_id, keep_latest, idle_ttl_s)
            await conn.execute(GIVE_BACK_LEASE, {"tid": thread_id, "holder": holder})
            return outcome
    except DBAPIError as exc:
        state = _sqlstate(exc)
        if state in BUSY_SQLSTATES:
            return Outcome("busy")
        if state == GONE_SQLSTATE:
            return Outcome("kept")
        raise


def _sqlstate(exc: DBAPIError) -> str | None:
    orig: Any = exc.orig
    return getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)


async def _retain(
    conn: AsyncConnection, thread_id: str, keep_latest: int, idle_ttl_s: float
) -> Outcome:
    heads = [Head(**row._mapping) for row in await conn.execute(HEADS, {"tid": thread_id})]
    if not heads:
        return Outcome("kept")
    if any(h.interrupted for h in heads):
        return Outcome("pending")
    root = next((h for h in heads if h.ns == ""), None)
    last = root.ts if root is not None else None
    if idle_ttl_s > 0 and last is not None and last < utcnow() - timedelta(seconds=idle_ttl_s):
        return await _clear(conn, thread_id, idle_since=last)
    return await _prune(conn, thread_id, heads, keep_latest)


async def _clear(conn: AsyncConnection, thread_id: str, *, idle_since: datetime) -> Outcome:
    """Delete every checkpoint row of the thread (what `adelete_thread` does) and audit it."""
    counts = [(await conn.execute(sql, {"tid": thread_id})).rowcount for sql in CLEAR]
    writes, blobs, checkpoints = (int(c or 0) for c in counts)
    await conn.execute(
        insert(AuditEvent).values(
            actor_username=CLEARED_BY,
            action="conversation.checkpoints_expire",
            resource_type="conversation",
            resource_id=thread_id,
            outcome="success",
            details={
                "idle_since": idle_since.isoformat(),
                "checkpoint_rows_deleted": writes + blobs + checkpoints,
            },
        )
    )
    return Outcome("cleared", checkpoints=checkpoints, blobs=blobs, writes=writes)


async def _prune(
    conn: AsyncConnection, thread_id: str, heads: list[Head], keep_latest: int
) -> Outcome:
    kept: dict[str, list[str]] = {}
    for h in heads:
        # Before format v4 the latest checkpoint reads its pending sends from its parent.
        n = max(keep_latest, 2) if h.v < 4 else keep_latest
        rows = await conn.scalars(LATEST, {"tid": thread_id, "ns": h.ns, "n": n})
        kept[h.ns] = await replay.with_seeds(conn, thread_id=thread_id, ns=h.ns, latest=list(rows))
    # A subgraph call's namespace ("name:task_id") goes with the root checkpoint it started
    # from, once that one is saved (runs save in the background) and is not kept.
    calls = [h.ns for h in heads if ":" in h.ns and h.root_saved and h.root not in kept.get("", [])]
    outcome = Outcome("pruned")
    for ns in calls:
        key = {"tid": thread_id, "ns": ns}
        counts = [(await conn.execute(sql, key)).rowcount for sql in CLEAR_NAMESPACE]
        writes, blobs, checkpoints = (int(c or 0) for c in counts)
        outcome.writes += writes
        outcome.blobs += blobs
        outcome.checkpoints += checkpoints
    for ns, ids in kept.items():
        if ns not in calls:
            await _prune_namespace(conn, thread_id, ns, ids, outcome)
    if not (outcome.checkpoints or outcome.blobs or outcome.writes):
        outcome.action = "kept"
    return outcome


async def _prune_namespace(
    conn: AsyncConnection, thread_id: str, ns: str, kept: list[str], outcome: Outcome
) -> None:
    key = {"tid": thread_id, "ns": ns}
    unkept = list(await conn.scalars(UNKEPT, {**key, "kept": kept}))
    if not unkept:
        return
    outcome.writes += int((await conn.execute(DELETE_WRITES, {**key, "ids": unkept})).rowcount or 0)
    freed = {
        (r.channel, r.version)
        for r in await conn.execute(DELETE_CHECKPOINTS, {**key, "ids": unkept})
    }
    outcome.checkpoints += len(unkept)
    await conn.execute(ORPHAN_PARENTS, {**key, "ids": unkept})
    referenced = {(r.channel, r.version) for r in await conn.execute(REFERENCED, key)}
    garbage = sorted(freed - referenced)
    if garbage:
        result = await conn.execute(
            DELETE_BLOBS,
            {**key, "channels": [c for c, _ in garbage], "versions": [v for _, v in garbage]},
        )
        outcome.blobs += int(result.rowcount or 0)
