"""The usage run hook: counts the run's model calls and stores them with the run's end (the
lease's release carries them, `closing`); outside a run (an evaluation case) `flush` writes them.

The budget is checked from the lease answer (`grant["usage"]`), so it costs no round trip: a
user at their daily budget is refused in `started`, before any model call; a run that reaches
it between two calls is stopped by the `Guard` callback at the next call.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler

from agent.backend_client import BackendClient, BackendError
from agent.errors import Code
from agent.hooks import HookFactory, RunHooks, RunInfo
from agent.usage.meter import Call, Counter, Guard, Meter, Standing

log = logging.getLogger(__name__)
PATH = "/api/agent/usage"
WRITE_TIMEOUT_S = 5.0
WRITE_ATTEMPTS = 3  # the write is idempotent (one key per call): a lost answer is resent
RETRY_CODES = frozenset({Code.BACKEND_UNAVAILABLE, Code.BACKEND_TIMEOUT})


class UsageHooks(RunHooks):
    """One run's usage: its calls, the budget check, and the write in `flush`."""

    def __init__(self, info: RunInfo, client: BackendClient) -> None:
        super().__init__(info)
        self.client = client
        self.meter = Meter(run_id=info.run_id)
        self._callbacks = (Guard(self.meter), Counter(self.meter))
        self._handed = False

    def callbacks(self) -> Sequence[BaseCallbackHandler]:
        return self._callbacks

    async def started(self, grant: Mapping[str, Any]) -> None:
        self.meter.standing = Standing.from_grant(dict(grant))
        self.meter.check()

    def closing(self) -> Mapping[str, Any]:
        calls = self.meter.close_all()
        self._handed = True  # the run's end stores them: `flush` has nothing left to write
        return {"usage": records(self.info, calls)} if calls else {}

    async def flush(self) -> None:
        calls = self.meter.close_all()
        if calls and not self._handed:
            await write(self.client, self.info, calls)


def records(info: RunInfo, calls: Sequence[Call]) -> list[dict[str, Any]]:
    """The calls as the backend stores them (`POST /api/agent/usage`'s `calls`)."""
    return [
        {
            "key": c.key,
            "conversation_id": None if info.evaluation else info.context.conversation_id,
            "run_id": info.run_id[:64],
            "mode": info.mode,
            "model": c.model,
            "input_tokens": c.input_tokens,
            "output_tokens": c.output_tokens,
            "source": "reported" if c.reported else "estimated",
            "evaluation": info.evaluation,
        }
        for c in calls
    ]


async def write(client: BackendClient, info: RunInfo, calls: Sequence[Call]) -> None:
    """POST the calls (retried: the backend counts each key once); a failure is logged."""
    context = info.context
    body = {"calls": records(info, calls)}
    for attempt in range(1, WRITE_ATTEMPTS + 1):
        try:
            await client.call(context, "POST", PATH, json=body, timeout=WRITE_TIMEOUT_S)
            return
        except BackendError as exc:
            if attempt == WRITE_ATTEMPTS or not (exc.code in RETRY_CODES or exc.status >= 500):
                log.warning("could not record the usage of run %s: %s", info.run_id, exc)
                return
            await asyncio.sleep(0.2 * attempt)


def usage_hooks(client: BackendClient) -> HookFactory:
    """The hook factory for `Runner(hooks=[...])`."""
    return lambda info: UsageHooks(info, client)
