"""Reading a thread's delta-stored messages without replaying its whole history at every read.

Saves: the library's read of a thread's delta history (up to a thousand checkpoint rows and every
write since the snapshot, deserialised) at each of a turn's two reads; a cold read against a
remembered one is in bench/delta_snapshots.py's table.
Bench: `uv run python bench/delta_snapshots.py` (the "read" columns, cold and remembered).
Remove when: LangGraph reads a delta history incrementally itself, or when the pin's upper bound
(pyproject.toml, `langgraph-checkpoint`) has to move and tests/agent/unit/test_perf_tricks.py no
longer finds the private name used here (`langgraph.checkpoint.serde.types._DeltaSnapshot`) or the
saver's `aget_delta_channel_history` and `_cursor`.

With `messages` on a DeltaChannel (agent/perf/delta_state.py) a checkpoint holds no copy of
them: LangGraph asks the checkpointer for the channel's history
(`aget_delta_channel_history`: the nearest snapshot and every write since) and replays it.
A turn reads its thread twice (the run's
`aget_state`, then the graph's own load), and the library's read pages over up to a thousand
checkpoint rows and deserializes every write since the snapshot: its cost grows with the
conversation (up to `agent.snapshot_every` writes), which is what the change set out to stop.

So the checkpointer remembers, per thread, the last history it returned and the checkpoint it
was for. A checkpoint never changes once saved, so that history stays true. A later read of the
same checkpoint gets it again; a read of a newer checkpoint whose parents lead back to it, with
no snapshot on the way, gets it plus the writes of the checkpoints in between: one query over
those few checkpoints (a turn's six or seven) and one over their writes, both by primary key.
Anything else (no history remembered, a snapshot or a missing checkpoint on the way, another
namespace) goes to the library's read, whose result is remembered in turn. Replicas need no
coordination: each reads the database, and what it remembers is a fact about an id.

The history handed out shares its message objects with what is remembered (copying them would
cost what the read saves): the agent treats messages as values (middleware builds new ones with
`model_copy`/`override`), so nothing changes one in place. Lists are copied. At most
`MAX_THREADS` threads are remembered, least recently used first out.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    DeltaChannelHistory,
    PendingWrite,
    get_checkpoint_id,
    writes_sort_key,
)
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.types import _DeltaSnapshot

MAX_THREADS = 32

# The checkpoints after the remembered one up to the target, with their parent and whether each
# stores a value for the channel (LangGraph's own test: a blob of the channel's version there,
# or a value kept inline): such a checkpoint is where the library's walk would stop.
CHAIN = """
SELECT c.checkpoint_id, c.parent_checkpoint_id,
    EXISTS (
        SELECT 1 FROM checkpoint_blobs b
        WHERE b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns
        AND b.channel = %(ch)s AND b.version = c.checkpoint -> 'channel_versions' ->> %(ch)s
        AND b.type <> 'empty'
    ) OR coalesce(c.checkpoint -> 'channel_values' -> %(ch)s, 'null'::jsonb) <> 'null'::jsonb
    AS stored
FROM checkpoints c
WHERE c.thread_id = %(tid)s AND c.checkpoint_ns = %(ns)s
AND c.checkpoint_id >= %(since)s AND c.checkpoint_id <= %(target)s
"""
WRITES = """
SELECT checkpoint_id, task_id, task_path, idx, type, blob
FROM checkpoint_writes
WHERE thread_id = %(tid)s AND checkpoint_ns = %(ns)s AND channel = %(ch)s
AND checkpoint_id = ANY(%(ids)s)
"""


@dataclass(frozen=True)
class Known:
    """The history of one channel at one checkpoint."""

    checkpoint_id: str
    history: DeltaChannelHistory


def _copy(history: DeltaChannelHistory) -> DeltaChannelHistory:
    """The same history in new lists (what a replay may change), sharing the messages."""
    out: DeltaChannelHistory = {"writes": list(history["writes"])}
    if "seed" in history:
        seed = history["seed"]
        if isinstance(seed, _DeltaSnapshot) and isinstance(seed.value, list):
            seed = _DeltaSnapshot(list(seed.value))
        elif isinstance(seed, list):
            seed = list(seed)
        out["seed"] = seed
    return out


class Histories:
    """The last delta history read per (thread, namespace, channel); see module."""

    def __init__(self, max_threads: int = MAX_THREADS) -> None:
        self.max_threads = max_threads
        self._known: OrderedDict[tuple[str, str, str], Known] = OrderedDict()

    def get(self, key: tuple[str, str, str]) -> Known | None:
        known = self._known.get(key)
        if known is not None:
            self._known.move_to_end(key)
        return known

    def remember(
        self, key: tuple[str, str, str], checkpoint_id: str, h: DeltaChannelHistory
    ) -> None:
        self._known[key] = Known(checkpoint_id, _copy(h))
        self._known.move_to_end(key)
        while len(self._known) > self.max_threads:
            self._known.popitem(last=False)

    async def read(
        self,
        cur: Any,
        serde: SerializerProtocol,
        *,
        thread_id: str,
        ns: str,
        target: str,
        channels: Sequence[str],
    ) -> Mapping[str, DeltaChannelHistory] | None:
        """Every channel's history at `target` from what is remembered, or None if any one
        cannot be had that way (the caller then reads it as the library does)."""
        out: dict[str, DeltaChannelHistory] = {}
        for ch in channels:
            known = self.get((thread_id, ns, ch))
            if known is None or known.checkpoint_id > target:
                return None
            if known.checkpoint_id == target:
                out[ch] = _copy(known.history)
                continue
            key = {"tid": thread_id, "ns": ns, "ch": ch, "since": known.checkpoint_id}
            await cur.execute(CHAIN, {**key, "target": target})
            rows = {r["checkpoint_id"]: r for r in await cur.fetchall()}
            chain = _chain(rows, since=known.checkpoint_id, target=target)
            if chain is None:
                return None
            await cur.execute(WRITES, {**key, "ids": chain})
            out[ch] = _copy(known.history)
            out[ch]["writes"].extend(_ordered(await cur.fetchall(), chain, ch, serde))
        for ch, history in out.items():
            self.remember((thread_id, ns, ch), target, history)
        return out


def _chain(rows: Mapping[str, Any], *, since: str, target: str) -> list[str] | None:
    """The checkpoints from `since` to the target's parent, oldest first, when the target's
    parents lead back to `since` and none of them after it stores the channel; else None."""
    if since not in rows or target not in rows:
        return None
    chain: list[str] = []
    cur = rows[target]["parent_checkpoint_id"]
    while cur != since:
        row = rows.get(cur) if cur is not None else None
        if row is None or row["stored"]:
            return None
        chain.append(cur)
        cur = row["parent_checkpoint_id"]
    chain.append(since)
    chain.reverse()
    return chain


def _ordered(
    rows: Sequence[Any], chain: list[str], ch: str, serde: SerializerProtocol
) -> list[PendingWrite]:
    """The writes in the order the library replays them: by checkpoint along the chain, then
    as a superstep applies them (`writes_sort_key`)."""
    position = {cid: i for i, cid in enumerate(chain)}
    ordered = sorted(
        rows,
        key=lambda r: (
            position[r["checkpoint_id"]],
            writes_sort_key(r["task_path"] or "", r["task_id"], r["idx"]),
        ),
    )
    return [(r["task_id"], ch, serde.loads_typed((r["type"], r["blob"]))) for r in ordered]


class RememberedHistories(AsyncPostgresSaver):
    """AsyncPostgresSaver that reads delta-stored messages from what it last read (`Histories`)."""

    histories: Histories

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.histories = Histories()

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """What a DeltaChannel replays, from what this saver last read of the thread when it
        can, else as the library reads it (remembered in turn)."""
        target = get_checkpoint_id(config)
        thread_id = str(config["configurable"]["thread_id"])
        ns = str(config["configurable"].get("checkpoint_ns", ""))
        if target is not None:
            async with self._cursor() as cur:
                known = await self.histories.read(
                    cur, self.serde, thread_id=thread_id, ns=ns, target=target, channels=channels
                )
            if known is not None:
                return known
        read = await super().aget_delta_channel_history(config=config, channels=channels)
        if target is not None:
            for ch, history in read.items():
                self.histories.remember((thread_id, ns, ch), target, history)
        return read
