"""The agent's LangGraph checkpoints of a conversation (same database, FR-012), reached through
the checkpointer's own API so that a change of its schema cannot silently break FR-029."""

from __future__ import annotations

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg import errors


class Checkpoints:
    """Deletes threads; one short connection per call, as archiving is rare."""

    def __init__(self, database_url: str) -> None:
        self._url = database_url

    async def delete_thread(self, thread_id: str) -> bool:
        """Delete every checkpoint, blob and pending write of the thread; whether it had any."""
        config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
        async with AsyncPostgresSaver.from_conn_string(self._url) as saver:
            try:
                had = await saver.aget_tuple(config) is not None
            except errors.UndefinedTable:  # the agent never set its tables up: nothing to clear
                return False
            await saver.adelete_thread(thread_id)
            return had
