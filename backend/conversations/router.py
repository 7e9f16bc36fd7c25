"""Conversation routes (browser and agent) and the agent's run lease."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Header, Query, Request, Response, status

from backend.codes import Code
from backend.conversations import ending, search, service
from backend.conversations.checkpoints import Checkpoints
from backend.conversations.models import AgentRun, Message
from backend.conversations.schemas import (
    ActiveRead,
    ConversationCreate,
    ConversationDetail,
    ConversationListItem,
    ConversationPage,
    ConversationRead,
    ConversationUpdate,
    HistoryItem,
    HistoryPage,
    LeaseRead,
    LeaseRequest,
    LeaseThread,
    MessageCreate,
    MessageRead,
    RunEnd,
    RunEndRead,
)
from backend.db import utcnow
from backend.deps import AgentPrincipal, CurrentPrincipal, Page, SessionDep, SettingsDep
from backend.errors import NotFound, responses
from backend.feedback import service as feedback_service
from backend.feedback.schemas import FeedbackState
from backend.usage import service as usage_service
from backend.usage.schemas import LeaseUsage

router = APIRouter(tags=["conversations"])
PREFIX = "/api/assistant/conversations"
ERRORS = responses(401, 404, 422)
# An agent write's key (its answer was lost, it is sent again): agent-only and not part of the
# browser's API, so kept out of the OpenAPI document.
IdempotencyKey = Annotated[
    str | None,
    Header(alias="Idempotency-Key", min_length=1, max_length=64, include_in_schema=False),
]


async def _checkpoints(request: Request) -> Checkpoints:
    checkpoints: Checkpoints = request.app.state.checkpoints
    return checkpoints


CheckpointsDep = Annotated[Checkpoints, Depends(_checkpoints)]


def _message(m: Message) -> MessageRead:
    return MessageRead(
        id=m.id, role=m.role, content=m.content, metadata=m.meta, created_at=m.created_at
    )


def _history_item(m: Message, feedback: FeedbackState | None) -> HistoryItem:
    return HistoryItem(
        id=m.id,
        role=m.role,
        content=m.content,
        metadata=m.meta,
        created_at=m.created_at,
        feedback=feedback,
    )


@router.post(
    PREFIX,
    response_model=ConversationRead,
    status_code=status.HTTP_201_CREATED,
    responses=responses(401, 422),
)
async def create(body: ConversationCreate, principal: CurrentPrincipal, session: SessionDep):
    """Start a conversation; without a title, the first user message names it."""
    return await service.create(session=session, actor=principal, title=body.title)


# Unset fields are left out: `snippet` appears only in search results.
@router.get(
    PREFIX,
    response_model=ConversationPage,
    response_model_exclude_unset=True,
    responses=responses(401, 422),
)
async def list_(
    principal: CurrentPrincipal,
    session: SessionDep,
    page: Page,
    archived: bool = False,
    q: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=200,
            description="Words to find in the title or any message (all must occur; words of "
            "3+ letters match as prefixes)",
        ),
    ] = None,
) -> ConversationPage:
    """The caller's conversations, newest activity first; with `q`, only those that match."""
    if q is None:
        rows, total = await service.list_(
            session=session,
            actor=principal,
            archived=archived,
            limit=page.limit,
            offset=page.offset,
        )
        items = [ConversationListItem.model_validate(r) for r in rows]
        return ConversationPage(items=items, total=total)
    hits, total = await search.search(
        session=session,
        actor=principal,
        q=q,
        archived=archived,
        limit=page.limit,
        offset=page.offset,
    )
    items = [
        ConversationListItem.model_validate(c).model_copy(update={"snippet": s}) for c, s in hits
    ]
    return ConversationPage(items=items, total=total)


@router.get(PREFIX + "/{conversation_id}", response_model=ConversationDetail, responses=ERRORS)
async def get(conversation_id: uuid.UUID, principal: CurrentPrincipal, session: SessionDep):
    """One of the caller's conversations, with the tokens its model calls used."""
    conversation = await service.get(
        session=session, actor=principal, conversation_id=conversation_id
    )
    usage = await usage_service.conversation_usage(session=session, conversation_id=conversation_id)
    return ConversationDetail.model_validate(
        {**ConversationRead.model_validate(conversation).model_dump(), "usage": usage}
    )


@router.patch(PREFIX + "/{conversation_id}", response_model=ConversationRead, responses=ERRORS)
async def update(
    conversation_id: uuid.UUID,
    body: ConversationUpdate,
    principal: CurrentPrincipal,
    session: SessionDep,
):
    """Rename a conversation."""
    return await service.update_title(
        session=session, actor=principal, conversation_id=conversation_id, title=body.title
    )


@router.get(PREFIX + "/{conversation_id}/history", response_model=HistoryPage, responses=ERRORS)
async def history(
    conversation_id: uuid.UUID,
    principal: CurrentPrincipal,
    session: SessionDep,
    settings: SettingsDep,
    limit: Annotated[int | None, Query(ge=1)] = None,
    before: Annotated[int | None, Query(ge=1, description="message id cursor")] = None,
) -> HistoryPage:
    """Messages oldest first; page backwards with `before` = the first item's id."""
    cap = min(limit or settings.api.default_page_size, settings.api.max_page_size)
    rows, has_more = await service.history(
        session=session, actor=principal, conversation_id=conversation_id, limit=cap, before=before
    )
    answers = [m.id for m in rows if m.role == "assistant"]
    rated = await feedback_service.of_messages(session=session, message_ids=answers)
    items = [_history_item(m, feedback_service.feedback_state(rated.get(m.id))) for m in rows]
    return HistoryPage(items=items, has_more=has_more)


@router.delete(
    PREFIX + "/{conversation_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    responses=responses(401, 404, 409, 422),
)
async def archive(
    conversation_id: uuid.UUID,
    principal: CurrentPrincipal,
    session: SessionDep,
    checkpoints: CheckpointsDep,
) -> Response:
    """Archive the conversation and delete its agent checkpoints; 409 CONVERSATION_BUSY while a
    run holds it (nothing changes: archive again when the reply has ended)."""
    await service.archive(
        session=session,
        actor=principal,
        conversation_id=conversation_id,
        checkpoints=checkpoints,
    )
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post(
    PREFIX + "/{conversation_id}/restore", response_model=ConversationRead, responses=ERRORS
)
async def restore(conversation_id: uuid.UUID, principal: CurrentPrincipal, session: SessionDep):
    """Bring an archived conversation back to the active list."""
    return await service.restore(session=session, actor=principal, conversation_id=conversation_id)


@router.post(
    PREFIX + "/{conversation_id}/messages",
    response_model=MessageRead,
    status_code=status.HTTP_201_CREATED,
    responses=responses(401, 403, 404, 409, 422),
)
async def append_message(
    conversation_id: uuid.UUID,
    body: MessageCreate,
    principal: AgentPrincipal,
    session: SessionDep,
    idempotency_key: IdempotencyKey = None,
):
    """Append a message to the history (agent service, on behalf of the owner). Sent again
    with the same `Idempotency-Key` (its answer was lost), it is stored once."""
    message = await service.append_message(
        session=session,
        actor=principal,
        conversation_id=conversation_id,
        data=body,
        idempotency_key=idempotency_key,
    )
    return _message(message)


AGENT = "/api/agent/conversations/{conversation_id}"


# Unset fields are left out: an idle conversation is just {"active": false}.
@router.get(
    AGENT + "/active", response_model=ActiveRead, response_model_exclude_none=True, responses=ERRORS
)
async def active(conversation_id: uuid.UUID, principal: CurrentPrincipal, session: SessionDep):
    """Whether an agent run currently holds the conversation, and which (`run_id`)."""
    run = await service.live_run(session=session, actor=principal, conversation_id=conversation_id)
    if run is None or run.expires_at <= utcnow():
        return ActiveRead(active=False)
    return ActiveRead(active=True, run_id=run.run_id, started_at=run.acquired_at)


@router.get(AGENT + "/lease", response_model=LeaseRead, responses=responses(401, 403, 404, 422))
async def read_lease(conversation_id: uuid.UUID, principal: AgentPrincipal, session: SessionDep):
    """The conversation's lease (agent service, on behalf of the owner): which run holds it,
    where it is served, and whether it `expired` (its process stopped renewing it); 404 when
    no run holds it or it is someone else's conversation."""
    run = await service.live_run(session=session, actor=principal, conversation_id=conversation_id)
    if run is None:
        raise NotFound("No run holds this conversation", code=Code.NO_ACTIVE_RUN)
    return _lease(run, expired=run.expires_at <= utcnow())


# The lease's upsert answering the user's standing and the thread's facts, built once.
_LEASE_WITH_FACTS = service.lease_upsert((*usage_service.STANDING_COLUMNS, *service.THREAD_COLUMNS))


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
    run, facts = await service.acquire_lease(
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
            **service.thread_params(conversation_id),
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
    await service.release_lease(
        session=session, actor=principal, conversation_id=conversation_id, holder=holder
    )
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post(AGENT + "/end", response_model=RunEndRead, responses=responses(401, 403, 404, 422))
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
