"""The agent's state schema: its `messages` stored as deltas, not copied whole at every step.

Saves: checkpoint data growing with the square of a thread's length (docs/architecture.md,
"Checkpoints that grow with what is new").
Bench: `uv run python bench/delta_snapshots.py` (bytes stored and read time per layout).
Remove when: `create_agent`'s own state stores messages as deltas, or when the pin's upper bound
(pyproject.toml, `langgraph`) has to move and tests/agent/unit/test_perf_tricks.py no longer finds
the private reducer used here (`langgraph.graph.message._messages_delta_reducer`) or
`DeltaChannel(snapshot_frequency=)`.

`create_agent`'s own state declares `messages` with `add_messages` on a channel that keeps its
whole value: the Postgres checkpointer then writes the full message list as a new blob at every
graph step that changed it (four per tool turn), so a thread's checkpoint data grows with the
square of its length, and a large tool result is written again in every later checkpoint.
Declared here as LangGraph's `DeltaChannel`, a checkpoint stores no copy of the messages: the
checkpointer already keeps each step's writes (`checkpoint_writes`, one row per message batch,
written once), and a thread's messages are rebuilt by replaying the writes since the nearest
full snapshot, which is written every `agent.snapshot_every` updates of the channel
(docs/architecture.md, "Checkpoints that grow with what is new", has the measurement behind its
default).

A thread written before this change resumes as it is: its checkpoints hold the full list as a
plain blob, which `DeltaChannel` takes as its starting value (`from_checkpoint`), and the
checkpoints written after it replay onto it (tests/agent/test_delta_state.py).

The reducer is LangGraph's own batch reducer for messages (`_messages_delta_reducer`, exported
by `langgraph.graph.message` under that name and named in `DeltaChannel`'s documentation): the
loop gives every message written to a channel with that very reducer a stable id before it is
stored, which replay needs (`ensure_message_ids`), so it must be that function, not a copy.
Both are marked beta by LangGraph; tests/agent/test_delta_state.py fails loudly if either
changes shape. Retention keeps what replay needs (backend/retention/thread.py).
"""

import functools
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Required, cast

from langchain.agents import AgentState
from langchain_core.messages import AnyMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.graph.message import _messages_delta_reducer


@functools.cache
def delta_state(snapshot_every: int) -> type[AgentState[Any]]:
    """`create_agent`'s state, with `messages` on a DeltaChannel that writes a full snapshot
    every `snapshot_every` updates (`agent.snapshot_every`; a tool turn makes four: the
    question, the call, its result, the answer)."""
    # The reducer takes lists where the channel's signature says sequences; it is given lists.
    reducer = cast("Callable[[Any, Sequence[Any]], Any]", _messages_delta_reducer)
    channel: DeltaChannel[list[AnyMessage]] = DeltaChannel(
        reducer, snapshot_frequency=snapshot_every
    )

    class DeltaState(AgentState[Any]):
        messages: Required[Annotated[list[AnyMessage], channel]]

    return DeltaState
