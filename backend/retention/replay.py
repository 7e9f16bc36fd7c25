"""What a pruned thread must keep for its DeltaChannels to be rebuilt (agent/perf/delta_state.py).

A DeltaChannel (the agent's `messages`) is not stored in each checkpoint: LangGraph rebuilds it
by walking a checkpoint's parents back to the nearest one that stores a value for the channel
(a snapshot blob, or the plain list a thread written before the change holds), and replaying the
writes (`checkpoint_writes`) of every checkpoint on the way. So a thread pruned to its latest
checkpoints still restores exactly only if it also keeps every checkpoint from the oldest kept
one back to that "seed", with their writes and the seed's blob.

The checkpoints of a namespace form one chain here (the agent never forks a thread; ids grow
with time), so "back to the seed" is "every checkpoint whose id is not below the seed's".
Which channels are delta channels is read from the checkpoints themselves: LangGraph counts, in
a checkpoint's metadata (`counters_since_delta_snapshot`), the updates of each delta channel
since its last snapshot. A thread that has none (written before the change, or snapshotting at
every step) is pruned as before.
"""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

DELTA_CHANNELS = text("""
SELECT DISTINCT k
FROM checkpoints c
CROSS JOIN LATERAL jsonb_object_keys(
    CASE WHEN jsonb_typeof(c.metadata -> 'counters_since_delta_snapshot') = 'object'
    THEN c.metadata -> 'counters_since_delta_snapshot' ELSE '{}'::jsonb END
) AS k
WHERE c.thread_id = :tid AND c.checkpoint_ns = :ns
""")

# The newest checkpoint at or before :upto that stores a value for :ch (what LangGraph's walk
# stops at: a blob of the channel's version there, or a value kept inline).
SEED = text("""
SELECT c.checkpoint_id
FROM checkpoints c
WHERE c.thread_id = :tid AND c.checkpoint_ns = :ns AND c.checkpoint_id <= :upto
AND (
    EXISTS (
        SELECT 1 FROM checkpoint_blobs b
        WHERE b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns
        AND b.channel = :ch AND b.version = c.checkpoint -> 'channel_versions' ->> :ch
        AND b.type <> 'empty'
    )
    OR coalesce(c.checkpoint -> 'channel_values' -> :ch, 'null'::jsonb) <> 'null'::jsonb
)
ORDER BY c.checkpoint_id DESC
LIMIT 1
""")

FROM_SEED = text("""
SELECT checkpoint_id FROM checkpoints
WHERE thread_id = :tid AND checkpoint_ns = :ns AND checkpoint_id >= :seed
""")
EVERY = text("SELECT checkpoint_id FROM checkpoints WHERE thread_id = :tid AND checkpoint_ns = :ns")


async def with_seeds(
    conn: AsyncConnection, *, thread_id: str, ns: str, latest: list[str]
) -> list[str]:
    """`latest` (a namespace's newest checkpoint ids) and every checkpoint their delta
    channels replay from: back to the seed of the oldest one, or all when one has none."""
    if not latest:
        return latest
    key = {"tid": thread_id, "ns": ns}
    channels = list(await conn.scalars(DELTA_CHANNELS, key))
    if not channels:
        return latest
    oldest = min(latest)
    seeds = [await conn.scalar(SEED, {**key, "upto": oldest, "ch": ch}) for ch in sorted(channels)]
    if any(seed is None for seed in seeds):  # replayed from the thread's first write
        return list(await conn.scalars(EVERY, key))
    floor = min(str(seed) for seed in seeds)
    return sorted({*latest, *await conn.scalars(FROM_SEED, {**key, "seed": floor})})
