"""One run per conversation across replicas: a lease row in Postgres, taken and renewed
through the backend (`PUT /api/agent/conversations/{id}/lease`), so no database connection is
held for the length of a run. A process that dies stops renewing; its lease expires in seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from agent import writes
from agent.backend_client import BackendClient, BackendError
from agent.context import Context
from agent.errors import Code

log = logging.getLogger(__name__)

PROCESS_ID = f"{socket.gethostname()}:{os.getpid()}"
# The holders whose lease this process renews now (agent/runs/takeover.py asks): a holder not
# in it will never renew again, so its lease lapses within its TTL.
RENEWING: set[str] = set()
RETRY_INTERVAL_S = 0.1
BUSY = Code.CONVERSATION_BUSY
RENEWAL_WAIT_S = 5.0  # how long a release waits for a renewal already on its way
END_TIMEOUT_S = 10.0  # one attempt of the end: a debug record can be 2 MB
USAGE_WAIT_S = 1.0  # an end with only usage to store is resent for this long
# An end that found no backend for its whole wait leaves its usage to a resend in the
# background for this long (every backend restarting at once on a loaded machine can take
# longer than a history write waits); each call is stored once by its own key.
USAGE_LATE_S = 300.0
_LATE: set[asyncio.Task[None]] = set()  # the resends under way (a task needs a reference)


class LeaseHeld(Exception):
    """Another run holds the conversation."""


class Lease:
    """The run's hold on one conversation; renew it with `heartbeat()` and `release()` it."""

    def __init__(
        self,
        client: BackendClient,
        context: Context,
        *,
        ttl_s: float,
        run_id: str | None = None,
        owner_url: str | None = None,
    ) -> None:
        self.client = client
        self.run_id = run_id  # written with the lease: viewers on other replicas find the run
        self.owner_url = owner_url
        self.context = context
        self.ttl_s = ttl_s
        self.holder = f"{PROCESS_ID}:{uuid.uuid4().hex[:12]}"[-128:]
        self.lost = False
        # A renewal found the conversation archived: this run had stalled past its lease, the
        # archive went through and deleted the thread, so the run must delete what it writes.
        self.archived = False
        self._on_loss: list[Callable[[], None]] = []  # told at once when `lost` turns True
        self.grant: dict[str, Any] = {}  # the backend's answer to the first PUT (run hooks read it)
        self._path = f"/api/agent/conversations/{context.conversation_id}/lease"
        self._heartbeat: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()

    def thread_has(self, fact: str) -> bool:
        """What the lease answer says of the conversation (`has_history`, `workflow_waiting`):
        only a lease holder changes either, so it holds for the run. True when not said, so
        that the run does the work it would otherwise skip."""
        thread = self.grant.get("thread")
        return not isinstance(thread, dict) or thread.get(fact) is not False

    async def _put(self, take_over: str | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"holder": self.holder, "ttl_s": self.ttl_s}
        if take_over:
            body["take_over"] = take_over
        if self.run_id:
            body["run_id"] = self.run_id
        if self.owner_url:
            body["owner_url"] = self.owner_url
        answer = await self.client.call(self.context, "PUT", self._path, json=body)
        return answer if isinstance(answer, dict) else {}

    async def acquire(self, *, wait_s: float = 0.0, take_over: str | None = None) -> None:
        """Take the lease, retrying for up to `wait_s` while another run holds it; else LeaseHeld.
        An archived conversation is the BackendError CONVERSATION_ARCHIVED (no lease taken).
        `take_over`: a holder found dead (agent/runs/takeover.py), whose lease is taken at once."""
        deadline = time.monotonic() + wait_s
        while True:
            try:
                self.grant = await self._put(take_over)
                break
            except BackendError as exc:
                if exc.code != BUSY:
                    raise
                if time.monotonic() >= deadline:
                    raise LeaseHeld() from exc
                await asyncio.sleep(RETRY_INTERVAL_S)
        RENEWING.add(self.holder)
        self._heartbeat = asyncio.create_task(self._renew(), name=f"lease {self.holder}")

    async def _renew(self) -> None:
        # Twice per TTL: a run of a few seconds (most runs) needs no renewal at all, and a
        # late renewal still has half the TTL to land.
        interval = max(self.ttl_s / 2, 0.5)
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), interval)
                return
            try:
                await self._put()
            except BackendError as exc:
                log.warning("lease renewal failed for %s: %s", self._path, exc)
                if exc.status == 409:  # another holder, or the conversation was archived
                    RENEWING.discard(self.holder)
                    self.lost = True
                    self.archived = exc.code == Code.CONVERSATION_ARCHIVED
                    for callback in list(self._on_loss):
                        callback()
                    return

    @contextlib.contextmanager
    def on_loss(self, callback: Callable[[], None]) -> Iterator[None]:
        """Call `callback` as soon as the lease is found lost (at once if it already is),
        while the block runs: a run that streams stops there, not at its next step."""
        if self.lost:
            callback()
        self._on_loss.append(callback)
        try:
            yield
        finally:
            self._on_loss.remove(callback)

    async def release(self, parts: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Stop renewing and give the conversation back, storing the run's last `parts` (its
        history row, debug record, usage) in the same request; the backend's answer, or {}
        when it could not be had (logged: the lease expires anyway).

        A renewal already sent is let finish first: cancelled on our side, it could still
        reach the backend after the release and take the conversation again for a whole TTL
        (the next message would be CONVERSATION_BUSY). With a history row the request is
        retried, with its idempotency key, while the backend is away (as any history write);
        without one it is sent once.
        """
        self._stopping.set()
        RENEWING.discard(self.holder)
        if self._heartbeat is not None:
            await asyncio.wait({self._heartbeat}, timeout=RENEWAL_WAIT_S)
            self._heartbeat.cancel()  # a renewal hung past that: the release goes out anyway
            with contextlib.suppress(asyncio.CancelledError):
                await self._heartbeat
        return await end_run(self.client, self.context, {**(parts or {}), "holder": self.holder})


async def end_run(
    client: BackendClient, context: Context, body: Mapping[str, Any]
) -> dict[str, Any]:
    """`POST .../end`: the parts of a run's end in one request (backend/runs/ending.py);
    the answer, or {} when the backend refused or stayed away (logged)."""
    path = f"/api/agent/conversations/{context.conversation_id}/end"
    # as long as a history write waits for a backend that is away; the usage alone a moment
    wait_s = writes.WAIT_S if body.get("message") else USAGE_WAIT_S if body.get("usage") else 0.0
    try:
        answer = await writes.send(
            client, context, "POST", path, json=dict(body), wait_s=wait_s, timeout=END_TIMEOUT_S
        )
    except BackendError as exc:
        log.warning("could not end the run of %s: %s", context.conversation_id, exc)
        if body.get("usage") and writes.retryable(exc):
            _resend_usage_later(client, context, path, body["usage"])
        return {}
    if not isinstance(answer, dict):
        return {}
    for part, error in (answer.get("errors") or {}).items():
        log.warning("the run's %s was not stored: %s", part, error)
    return answer


def _resend_usage_later(
    client: BackendClient, context: Context, path: str, usage: Any
) -> asyncio.Task[None]:
    """Send the run's usage alone again, in the background, until a backend takes it (or
    `USAGE_LATE_S` passes): the person's turn does not wait, and no model call goes uncounted
    because every backend was away when the run ended."""

    async def resend() -> None:
        try:
            await writes.send(
                client, context, "POST", path, json={"usage": usage},
                wait_s=USAGE_LATE_S, timeout=END_TIMEOUT_S,
            )  # fmt: skip
            log.info("the usage of the run of %s was stored late", context.conversation_id)
        except BackendError as exc:
            log.warning("gave up the usage of the run of %s: %s", context.conversation_id, exc)

    task = asyncio.create_task(resend(), name=f"late usage {context.conversation_id}")
    _LATE.add(task)
    task.add_done_callback(_LATE.discard)
    return task
