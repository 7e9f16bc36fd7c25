"""The conversation routes: the browser's list, search, detail and history (joined with usage
and feedback), renaming and archiving, and the agent's history appends."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, Response, status

from backend.assistant.schemas import ConversationDetail, HistoryItem, HistoryPage
from backend.conversations import service
from backend.conversations.checkpoints import Checkpoints
from backend.conversations.models import Message
from backend.conversations.schemas import (
    PREFIX,
    ConversationCreate,
    ConversationListItem,
    ConversationPage,
    ConversationRead,
    ConversationUpdate,
    MessageCreate,
    MessageRead,
)
from backend.deps import (
    AgentPrincipal,
    CurrentPrincipal,
    IdempotencyKey,
    Page,
    SessionDep,
    SettingsDep,
)
from backend.errors import responses
from backend.feedback import service as feedback_service
from backend.feedback.schemas import FeedbackState
from backend.search import service as search
from backend.usage import service as usage_service

router = APIRouter(tags=["conversations"])
ERRORS = responses(401, 404, 422)


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
