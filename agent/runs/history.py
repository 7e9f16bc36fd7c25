"""A run's history writes: the rows it adds to the conversation's history (audited by the
backend), queued and started from the turn's first output on, awaited before the turn is saved.
One per run (`Run.history`); the skeleton flushes it once, whatever way the run ended."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

from agent import writes
from agent.backend_client import BackendClient, BackendError
from agent.context import Context

log = logging.getLogger(__name__)


class History:
    """The history rows one run writes, and whether one of the person's was lost."""

    def __init__(self, client: BackendClient, context: Context, *, writing: bool) -> None:
        self.client = client
        self.context = context
        self.unsaved = False  # a message of the person's was not stored (the backend stayed away)
        self._writes: list[asyncio.Task[Any]] = []
        self._deferred: list[Coroutine[Any, Any, Any]] = []
        self._writing = writing  # from the turn's first output on, writes start as queued

    async def append(self, role: str, content: str, metadata: dict[str, Any]) -> int | None:
        """Add a message to the conversation's history; its id, or None when the backend
        refused it or stayed away past the bound (logged)."""
        path = f"/api/assistant/conversations/{self.context.conversation_id}/messages"
        body = {"role": role, "content": content, "metadata": metadata}
        try:
            created = await writes.send(self.client, self.context, "POST", path, json=body)
        except BackendError as exc:
            log.warning("could not persist a %s message: %s", role, exc)
            self.unsaved = self.unsaved or role == "user"
            return None
        return int(created["id"])

    def append_later(self, role: str, content: str, metadata: dict[str, Any]) -> None:
        self.later(self.append(role, content, metadata))

    def later(self, write: Coroutine[Any, Any, Any]) -> None:
        """Persist in the background from the turn's first output on (`Turn.on_first_output`,
        the one trigger for every kind); awaited before the turn is saved (`flush`).

        Deferred until then rather than started at once: under a burst of submits the
        backend's writes would otherwise delay every run's first model call. Once the turn
        has shown something, a write starts as it is queued.
        """
        self._deferred.append(write)
        if self._writing:
            self.start()

    def start(self) -> None:
        """Start the writes `later` deferred, and any queued from now on (idempotent)."""
        self._writing = True
        self._writes.extend(asyncio.create_task(write) for write in self._deferred)
        self._deferred.clear()

    async def flush(self) -> None:
        """Start and await every write queued so far (a failed one is logged, never raised)."""
        self.start()
        writes_, self._writes = self._writes, []
        for result in await asyncio.gather(*writes_, return_exceptions=True):
            if isinstance(result, BaseException):
                log.warning("a deferred write failed: %r", result)
