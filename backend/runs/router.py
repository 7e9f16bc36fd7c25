"""The agent's run routes: whether a run holds a conversation, its lease, and its end."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query, Response, status

from backend.codes import Code
from backend.conversations.models import AgentRun
from backend.db import utcnow
from backend.deps import AgentPrincipal, CurrentPrincipal, IdempotencyKey, SessionDep
from backend.errors import NotFound, responses
from backend.idempotency import service as idempotency
from backend.runs import ending, lease
from backend.runs.schemas import (
    ActiveRead,
    LeaseRead,
    LeaseRequest,
    LeaseThread,
    RunEnd,
    RunEndRead,
)
from backend.usage import service as usage_service
from backend.usage.schemas import LeaseUsage

router = APIRouter(tags=["conversations"])
ERRORS = responses(401, 404, 422)
AGENT = "/api/agent/conversations/{conversation_id}"


# Unset fields are left out: an idle conversation is just {"active": false}.
@router.get(
    AGENT + "/active", response_model=ActiveRead, response_model_exclude_none=True, responses=ERRORS
)
async def active(conversation_id: uuid.UUID, principal: CurrentPrincipal, session: SessionDep):
    """Whether an agent run currently holds the conversation, and which (`run_id`)."""
    run = await lease.live_run(session=session, actor=principal, conversation_id=conversation_id)
    if run is None or run.expires_at <= utcnow():
        return ActiveRead(active=False)
    return ActiveRead(active=True, run_id=run.run_id, started_at=run.acquired_at)


@router.get(AGENT + "/lease", response_model=LeaseRead, responses=responses(401, 403, 404, 422))
async def read_lease(conversation_id: uuid.UUID, principal: AgentPrincipal, session: SessionDep):
    """The conversation's lease (agent service, on behalf of the owner): which run holds it,
    where it is served, and whether it `expired` (its process stopped renewing it); 404 when
    no run holds it or it is someone else's conversation."""
    run = await lease.live_run(session=session, actor=principal, conversation_id=conversation_id)
    if run is None:
        raise NotFound("No run holds this conversation", code=Code.NO_ACTIVE_RUN)
    return _lease(run, expired=run.expires_at <= utcnow())


# The lease's upsert answering the user's standing and the thread's facts, built once.
_LEASE_WITH_FACTS = lease.lease_upsert((*usage_service.STANDING_COLUMNS, *lease.THREAD_COLUMNS))


@router.put(
    AGENT + "/lease", response_model=LeaseRead, responses=responses(401, 403, 404, 409, 422)
)
async def acquire_lease(
    conversation_id: uuid.UUID, body: LeaseRequest, principal: AgentPrincipal, session: SessionDep
):
    """Take or renew the run lease (agent service); 409 CONVERSATION_BUSY when another holds it,
    409 CONVERSATION_ARCHIVED when the conversation is archived."""
    # What the run needs before its first model call rides on the lease answer, read in one
    # statement of the lease's transaction: the user's standing (the budget check) and the
    # thread's facts (whether to recall history, whether a workflow waits to be superseded).
    run, facts = await lease.acquire_lease(
        session=session,
        actor=principal,
        conversation_id=conversation_id,
        holder=body.holder,
        ttl_s=body.ttl_s,
        run_id=body.run_id,
        owner_url=body.owner_url,
        take_over=body.take_over,
        upsert=_LEASE_WITH_FACTS,
        params={
            **usage_service.standing_params(principal.user_id),
            **lease.thread_params(conversation_id),
        },
    )
    return _lease(
        run,
        usage=LeaseUsage.model_validate(usage_service.standing_of(facts)),
        thread=LeaseThread(
            has_history=bool(facts.has_history), workflow_waiting=bool(facts.workflow_waiting)
        ),
    )


def _lease(
    run: AgentRun,
    *,
    expired: bool = False,
    usage: LeaseUsage | None = None,
    thread: LeaseThread | None = None,
) -> LeaseRead:
    return LeaseRead(
        conversation_id=run.conversation_id,
        holder=run.holder,
        expires_at=run.expires_at,
        run_id=run.run_id,
        owner_url=run.owner_url,
        acquired_at=run.acquired_at,
        expired=expired,
        usage=usage,
        thread=thread,
    )


@router.delete(
    AGENT + "/lease", status_code=status.HTTP_204_NO_CONTENT, responses=responses(401, 403, 404)
)
async def release_lease(
    conversation_id: uuid.UUID,
    principal: AgentPrincipal,
    session: SessionDep,
    holder: Annotated[str, Query(min_length=1, max_length=128)],
) -> Response:
    """Release the lease if `holder` still holds it."""
    await lease.release_lease(
        session=session, actor=principal, conversation_id=conversation_id, holder=holder
    )
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post(AGENT + "/end", response_model=RunEndRead, responses=responses(401, 403, 404, 422))
@idempotency.parts_keyed
async def end_run(
    conversation_id: uuid.UUID,
    body: RunEnd,
    principal: AgentPrincipal,
    session: SessionDep,
    idempotency_key: IdempotencyKey = None,
) -> RunEndRead:
    """A run's end in one request (agent service, on behalf of the owner): its history row,
    that row's debug record, its model calls, then the lease's release, each stored as its own
    route would; a refused part is named in `errors` and the others are stored. Sent again with
    the same `Idempotency-Key`, each part is stored once."""
    return await ending.end_run(
        session=session,
        actor=principal,
        conversation_id=conversation_id,
        data=body,
        idempotency_key=idempotency_key,
    )
