"""A conversation whose lease is held by a dead process takes new messages at once.

An agent that dies mid-answer stops renewing its lease, but the lease stays live for up to its
TTL: a new message sent at once through another agent would be CONVERSATION_BUSY. So when the
lease is busy, the holder is looked up (its `owner_url` and the process named in its holder,
`host:pid:run`) and asked which process it is (`GET /internal/process`, below):

- it is this process, or its owner answers as the holder's process and still renews it: a
  live run, still busy;
- the same process no longer renews it (its run is ending: the release is on its way, or the
  backend was away for it): the lease lapses within its TTL, which the run waits for;
- its owner refuses the connection, or answers as another process (restarted on the same
  port): the holder is dead, and the lease is taken from it at once (`take_over`, audited);
- no owner to ask, or the owner does not answer in time: the run waits for the lease to lapse
  (at most its TTL and a second), the person waits, and then the run goes on.

A holder wrongly found dead (a partition) loses its lease at its next renewal and stops.
"""

from __future__ import annotations

import enum
import logging
from typing import TYPE_CHECKING, Any

import httpx
from fastapi import APIRouter

from agent import inputs
from agent.backend_client import BackendClient, BackendError
from agent.context import Context
from agent.errors import AgentError, Busy, Code
from agent.lease import PROCESS_ID, RENEWING, Lease, LeaseHeld

if TYPE_CHECKING:
    from agent.runs.state import Services

log = logging.getLogger(__name__)

PROCESS_PATH = "/internal/process"
PROBE_TIMEOUT_S = 2.0
LAPSE_MARGIN_S = 1.0  # past the TTL: the backend's clock and ours


class Holder(enum.Enum):
    ALIVE = "alive"
    DEAD = "dead"
    UNKNOWN = "unknown"


def router() -> APIRouter:
    """`GET /internal/process`: which process serves this URL (no secret: the lease row names
    it too), so that another replica can tell a live lease holder from a dead one."""
    api = APIRouter(include_in_schema=False)

    @api.get(PROCESS_PATH)
    async def process(holder: str = "") -> dict[str, Any]:
        return {"process": PROCESS_ID, "renewing": holder in RENEWING}

    return api


def process_of(holder: str) -> str:
    """The `host:pid` a lease holder (`host:pid:run`) runs in."""
    return holder.rpartition(":")[0]


async def holder_state(lease: dict[str, Any]) -> Holder:
    """Whether the process holding `lease` (a lease row, as GET .../lease answers) is alive."""
    holder = str(lease.get("holder") or "")
    if lease.get("expired"):
        return Holder.DEAD
    if process_of(holder) == PROCESS_ID:
        return Holder.ALIVE if holder in RENEWING else Holder.UNKNOWN  # ours: running, or ending
    owner = str(lease.get("owner_url") or "").rstrip("/")
    if not owner:
        return Holder.UNKNOWN
    try:
        async with httpx.AsyncClient(timeout=PROBE_TIMEOUT_S, trust_env=False) as http:
            answer = await http.get(owner + PROCESS_PATH, params={"holder": holder})
    except httpx.ConnectError:
        return Holder.DEAD  # refused: nothing listens where the holder served
    except httpx.HTTPError as exc:
        log.info("could not ask %s about lease holder %s: %r", owner, holder, exc)
        return Holder.UNKNOWN
    if answer.status_code != 200:
        return Holder.UNKNOWN  # an agent that cannot say
    said = answer.json() if answer.content else {}
    if said.get("process") != process_of(holder):
        return Holder.DEAD
    return Holder.ALIVE if said.get("renewing", True) else Holder.UNKNOWN  # ending: it lapses


async def acquire(
    lease: Lease, client: BackendClient, context: Context, *, wait_s: float, ttl_s: float
) -> None:
    """`lease.acquire(wait_s=...)`; when busy, the lease is taken from a dead holder, or waited
    for while the holder cannot be asked. LeaseHeld when a live run holds it."""
    try:
        await lease.acquire(wait_s=wait_s)
        return
    except LeaseHeld:
        pass
    path = f"/api/agent/conversations/{context.conversation_id}/lease"
    try:
        row = await client.call(context, "GET", path)
    except BackendError as exc:
        if exc.code != Code.NO_ACTIVE_RUN:
            raise
        await lease.acquire(wait_s=1.0)  # released meanwhile
        return
    state = await holder_state(row if isinstance(row, dict) else {})
    if state is Holder.ALIVE:
        raise LeaseHeld()
    if state is Holder.DEAD:
        log.warning(
            "taking over conversation %s from dead holder %s",
            context.conversation_id,
            row.get("holder"),
        )
        await lease.acquire(wait_s=1.0, take_over=str(row.get("holder")))
        return
    await lease.acquire(wait_s=ttl_s + LAPSE_MARGIN_S)


async def take_lease(
    services: Services, context: Context, submit: inputs.Submit, *, run_id: str | None = None
) -> Lease:
    """Take the conversation's lease for a run; the backend checks ownership in the same call
    (someone else's conversation is 404) and refuses an archived one, so a run needs one round
    trip before its first model call."""
    settings = services.settings.agent
    lease = Lease(
        services.client,
        context,
        ttl_s=settings.lease_ttl_s,
        run_id=run_id,
        owner_url=settings.advertise_url,  # where viewers on other replicas reach this run
    )
    try:
        # busy: taken from a holder found dead, or waited for
        wait_s = settings.confirm_wait_s if submit.action else 0
        await acquire(lease, services.client, context, wait_s=wait_s, ttl_s=settings.lease_ttl_s)
    except LeaseHeld as exc:
        raise Busy("This conversation is busy with another run.") from exc
    except BackendError as exc:
        if exc.code == Code.CONVERSATION_ARCHIVED:
            if submit.action:
                raise AgentError(
                    "This conversation was archived.", code=Code.CHECKPOINT_EXPIRED
                ) from exc
            raise AgentError(
                "This conversation is archived; restore it first.",
                code=Code.CONVERSATION_ARCHIVED,
            ) from exc
        raise exc.shown() from exc
    return lease
