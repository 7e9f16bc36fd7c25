"""The LangGraph tricks of agent/perf/ (delta_state, delta_replay, saver_pool) reach into private
LangGraph names; these fail loudly when the library changes under them, with no Postgres: a
version outside the pin, a private name gone, a signature or an attribute the trick reads changed.

Each assertion's message names the module to re-read; the ranges are pyproject.toml's pins.
"""

from __future__ import annotations

import importlib.metadata
import inspect
import typing

import psycopg_pool
import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from packaging.version import Version

from agent.checkpoints import DurableSaver
from agent.perf.delta_replay import Histories, RememberedHistories, _copy
from agent.perf.delta_state import delta_state
from agent.perf.saver_pool import PoolCursor

CHECKED = {  # distribution -> [low, high): the versions the tricks were checked against
    "langgraph": ("1.2.24", "1.3"),
    "langgraph-checkpoint": ("4.3", "4.4"),
    "langgraph-checkpoint-postgres": ("3.2", "3.3"),
}


@pytest.mark.parametrize("distribution", sorted(CHECKED))
def test_langgraph_is_a_version_the_tricks_were_checked_against(distribution):
    installed = importlib.metadata.version(distribution)
    low, high = CHECKED[distribution]
    assert Version(low) <= Version(installed) < Version(high), (
        f"{distribution} {installed} is outside [{low}, {high}): re-check agent/perf/"
        " delta_state.py, delta_replay.py and saver_pool.py, then move this range and the pin"
        " in pyproject.toml"
    )


def test_the_private_delta_reducer_is_still_there_and_merges_batches_by_id():
    from langgraph.graph.message import _messages_delta_reducer

    params = list(inspect.signature(_messages_delta_reducer).parameters)
    assert params == ["state", "writes"], (
        "langgraph changed _messages_delta_reducer: re-check agent/perf/delta_state.py"
    )
    question = HumanMessage("q", id="1")
    merged = _messages_delta_reducer(
        [question], [[AIMessage("a", id="2")], [HumanMessage("q2", id="1")]]
    )
    assert [(m.id, m.text) for m in merged] == [("1", "q2"), ("2", "a")], (
        "the delta reducer no longer replaces a message by id: re-check agent/perf/delta_state.py"
    )
    assert "snapshot_frequency" in inspect.signature(DeltaChannel.__init__).parameters
    (messages,) = typing.get_args(delta_state(4).__annotations__["messages"])  # Required[...]
    channel = messages.__metadata__[0]
    assert isinstance(channel, DeltaChannel), "the state's messages are no longer a DeltaChannel"


def test_the_private_delta_snapshot_still_wraps_its_value():
    from langgraph.checkpoint.serde.types import _DeltaSnapshot

    seed = _DeltaSnapshot(["m"])
    copied = _copy({"writes": [], "seed": seed})
    assert isinstance(copied["seed"], _DeltaSnapshot), "re-check agent/perf/delta_replay.py _copy"
    assert copied["seed"].value == ["m"] and copied["seed"].value is not seed.value


async def test_the_saver_still_has_what_the_pool_cursor_and_the_replay_read():
    cursor = inspect.signature(AsyncPostgresSaver._cursor).parameters
    assert (
        list(cursor) == ["self", "pipeline"] and cursor["pipeline"].kind.name == "KEYWORD_ONLY"
    ), "langgraph-checkpoint-postgres changed _cursor: re-check agent/perf/saver_pool.py"
    history = inspect.signature(AsyncPostgresSaver.aget_delta_channel_history).parameters
    assert list(history) == ["self", "config", "channels"], (
        "the saver's delta history read changed: re-check agent/perf/delta_replay.py"
    )
    pool = psycopg_pool.AsyncConnectionPool("postgresql://nowhere.invalid/x", open=False)
    saver = DurableSaver(pool)
    for name in ("conn", "pipe", "supports_pipeline", "serde", "lock"):
        assert hasattr(saver, name), f"the saver lost `{name}`: re-check agent/perf/saver_pool.py"
    assert saver.conn is pool and saver.pipe is None
    assert isinstance(saver.histories, Histories)
    order = DurableSaver.__mro__
    assert (
        order.index(RememberedHistories) < order.index(PoolCursor) < order.index(AsyncPostgresSaver)
    )
    assert DurableSaver._cursor is PoolCursor._cursor
