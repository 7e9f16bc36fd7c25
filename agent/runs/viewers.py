"""`attach` and `stop` (CONTRACT.md, "Runs outlive the page"), on any replica.

A run is served by the process that owns it (agent/runs/live.py). A viewer on that process reads
the run's `Turn` directly: every streamed value is the whole turn so far, so a late viewer's
first value is everything until now and it ends with the same final value as the first viewer.
A viewer on another replica finds the owner in the conversation's lease (`owner_url`, written
by the owner) and relays its stream (agent/runs/internal.py) as the user: the owner checks the
user's token and the run's owner again. The owner pays nothing for a run nobody watches.

An owner that dies stops renewing its lease: a relayed viewer waits for the lease to expire and
ends with RUN_INTERRUPTED, keeping what it had shown; the conversation then takes new messages.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx

from agent.backend_client import BackendClient, BackendError
from agent.context import Context
from agent.errors import AgentError, Code, NotFound
from agent.runs.live import LiveRuns
from agent.runs.takeover import Holder, holder_state
from agent.stream import Turn, updates

log = logging.getLogger(__name__)

Messages = list[dict[str, Any]]
STOP_WAIT_S = 5.0  # a stopped run closes its calls and stores its turn within this
POLL_S = 0.5  # how often a viewer of a dead owner looks at the lease
NO_RUN = "No answer is running in this conversation."
NOT_FOUND = "Conversation not found."
INTERRUPTED = "The answer was interrupted: the server running it stopped. Ask again."


def _notice(code: Code, message: str) -> Messages:
    turn = Turn(thread_id="")
    turn.notice(code, message)
    return turn.snapshot()


def _failed(exc: AgentError) -> Messages:
    turn = Turn(thread_id="")
    turn.fail(exc)
    return turn.snapshot()


def _is_failure(shown: Messages | None) -> bool:
    """What `_lease` shows is an error (the backend away), not the run's absence."""
    return any((m.get("metadata") or {}).get("type") == "error" for m in shown or [])


def _interrupted(last: Messages) -> Messages:
    return [*last, *_failed(AgentError(INTERRUPTED, code=Code.RUN_INTERRUPTED))]


class Viewers:
    """Serves `attach` and `stop` for one process."""

    def __init__(
        self, *, runs: LiveRuns, client: BackendClient, own_url: str | None, lease_ttl_s: float
    ) -> None:
        self.runs = runs
        self.client = client
        self.own_url = (own_url or "").rstrip("/") or None
        self.lease_ttl_s = lease_ttl_s
        # Made now, not at the first relayed attach: a new client builds its TLS context
        # (~40 ms of CPU), which that viewer would wait for.
        self._http = httpx.AsyncClient(timeout=httpx.Timeout(10.0, read=None))

    def http(self) -> httpx.AsyncClient:
        return self._http

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _lease(self, context: Context) -> tuple[dict[str, Any] | None, Messages | None]:
        """(the lease row, None), or (None, what to show) when there is no run to reach."""
        path = f"/api/agent/conversations/{context.conversation_id}/lease"
        try:
            return await self.client.call(context, "GET", path), None
        except BackendError as exc:
            if exc.code == Code.NO_ACTIVE_RUN:
                return None, _notice(Code.NO_ACTIVE_RUN, NO_RUN)
            return None, _failed(exc)  # its one reading: BackendError.shown

    def _remote(self, lease: dict[str, Any]) -> str | None:
        owner = str(lease.get("owner_url") or "").rstrip("/")
        return owner if owner and owner != self.own_url else None

    async def attach(self, context: Context) -> AsyncIterator[Messages]:
        """The conversation's live run, to its end; never an end with nothing shown: a relay
        whose owner went away after its run had ended shows that no answer is running (the
        answer is in the history)."""
        shown = False
        async for value in self._attach(context):
            shown = True
            yield value
        if not shown:
            yield _notice(Code.NO_ACTIVE_RUN, NO_RUN)

    async def _attach(self, context: Context) -> AsyncIterator[Messages]:
        run = self.runs.get(context.conversation_id)
        if run is not None:
            if run.user_id != context.user_id:
                yield _failed(NotFound(NOT_FOUND))
                return
            async for value in updates(run.turn):
                yield value
            return
        lease, shown = await self._lease(context)
        if lease is None:
            yield shown or []
            return
        if lease.get("expired"):
            yield _failed(AgentError(INTERRUPTED, code=Code.RUN_INTERRUPTED))
            return
        owner = self._remote(lease)
        if owner is None:  # ours and just ended, or held by an agent that serves no viewers
            yield _notice(Code.NO_ACTIVE_RUN, NO_RUN)
            return
        async for value in self._relay(owner, context, lease):
            yield value

    async def _relay(
        self, owner: str, context: Context, lease: dict[str, Any]
    ) -> AsyncIterator[Messages]:
        last: Messages = []
        url = f"{owner}/internal/runs/{context.conversation_id}/stream"
        headers = {"Authorization": f"Bearer {context.user_token}"}
        try:
            async with self.http().stream("GET", url, headers=headers) as response:
                if response.status_code == 404:
                    # no such run there: it ended (the answer is in the history), or the
                    # process there is a new one on the same port and the run died with the old
                    if await self._died(context, lease):
                        yield _interrupted(last)
                    return  # attach shows that no answer is running
                response.raise_for_status()
                async for line in response.aiter_lines():
                    if not line.strip():
                        continue
                    item = json.loads(line)
                    if isinstance(item, list):
                        last = item
                        yield item
                    elif isinstance(item, dict) and item.get("end"):
                        return
        except (httpx.HTTPError, ValueError) as exc:
            log.info("the owner of run %s went away: %s", lease.get("run_id"), exc)
        # The owner's stream broke before the run's end: its process died (or is dying).
        if await self._expires(context, lease):
            yield _interrupted(last)

    async def _died(self, context: Context, lease: dict[str, Any]) -> bool:
        """Whether the run of `lease` still holds the conversation from a dead process."""
        now, _ = await self._lease(context)
        if now is None or now.get("run_id") != lease.get("run_id"):
            return False
        return bool(now.get("expired")) or await holder_state(now) is Holder.DEAD

    async def _expires(self, context: Context, lease: dict[str, Any]) -> bool:
        """Wait (up to the lease TTL and a little) for the dead owner's lease to expire; False
        when the run turned out to have ended (released) or another run took the conversation."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.lease_ttl_s + 5
        while loop.time() < deadline:
            now, shown = await self._lease(context)
            if now is None and _is_failure(shown):  # the backend is away: ask again, not "ended"
                await asyncio.sleep(POLL_S)
                continue
            if now is None or now.get("run_id") != lease.get("run_id"):
                return False
            if now.get("expired"):
                return True
            await asyncio.sleep(POLL_S)
        return True

    async def stop(self, context: Context) -> Messages:
        """Stop the conversation's run wherever it runs; the stopped turn's final value."""
        run = self.runs.get(context.conversation_id)
        if run is not None:
            if run.user_id != context.user_id:
                return _failed(NotFound(NOT_FOUND))
            run.stop()
            await run.ended(STOP_WAIT_S)
            return run.turn.snapshot()
        lease, shown = await self._lease(context)
        if lease is None:
            return shown or []
        owner = self._remote(lease)
        if lease.get("expired") or owner is None:
            return _notice(Code.NO_ACTIVE_RUN, NO_RUN)
        url = f"{owner}/internal/runs/{context.conversation_id}/stop"
        headers = {"Authorization": f"Bearer {context.user_token}"}
        try:
            response = await self.http().post(url, headers=headers, timeout=STOP_WAIT_S + 5)
        except httpx.HTTPError as exc:
            log.info("could not reach the owner of run %s: %s", lease.get("run_id"), exc)
            return _notice(Code.NO_ACTIVE_RUN, NO_RUN)
        if response.status_code == 404:
            return _notice(Code.NO_ACTIVE_RUN, NO_RUN)
        body = response.json() if response.is_success else {}
        messages = body.get("messages") if isinstance(body, dict) else None
        return messages if isinstance(messages, list) else []
