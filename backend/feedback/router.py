"""Feedback routes: the owner rates an answer; admins list ratings and export eval cases."""

from __future__ import annotations

import json
from datetime import date
from typing import Annotated

from fastapi import APIRouter, Path, Query, Response, status

from backend.deps import Admin, CurrentPrincipal, SessionDep
from backend.errors import responses
from backend.feedback import service
from backend.feedback.schemas import FeedbackPage, FeedbackRead, FeedbackWrite, Rating

router = APIRouter(tags=["feedback"])
MessageId = Annotated[int, Path(ge=1, le=2**63 - 1, description="An assistant history row")]
PAGE_LIMIT = 50
MAX_PAGE_LIMIT = 200
JSON_LINES = "application/x-ndjson"


@router.put(
    "/api/assistant/messages/{message_id}/feedback",
    response_model=FeedbackRead,
    responses=responses(401, 404, 422),
)
async def put(
    message_id: MessageId, body: FeedbackWrite, principal: CurrentPrincipal, session: SessionDep
) -> FeedbackRead:
    """Rate an answer of an own conversation up or down, with an optional note (replaces a
    rating given before); a user row is 422, someone else's 404."""
    feedback = await service.put(session=session, actor=principal, message_id=message_id, data=body)
    return FeedbackRead.model_validate(feedback, from_attributes=True)


@router.delete(
    "/api/assistant/messages/{message_id}/feedback",
    status_code=status.HTTP_204_NO_CONTENT,
    responses=responses(401, 404, 422),
)
async def delete(
    message_id: MessageId, principal: CurrentPrincipal, session: SessionDep
) -> Response:
    """Remove the rating of an answer of an own conversation."""
    await service.delete_(session=session, actor=principal, message_id=message_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/api/admin/feedback", response_model=FeedbackPage, responses=responses(401, 403, 422))
async def admin_list(
    principal: Admin,
    session: SessionDep,
    rating: Rating | None = None,
    from_: Annotated[date | None, Query(alias="from", description="First UTC day")] = None,
    to: Annotated[date | None, Query(description="Last UTC day (included)")] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE_LIMIT)] = PAGE_LIMIT,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> FeedbackPage:
    """Every rating (admin), newest first: the question, the answer, the tools it called."""
    items, total = await service.admin_list(
        session=session, rating=rating, start=from_, end=to, limit=limit, offset=offset
    )
    return FeedbackPage.model_validate({"items": items, "total": total})


@router.get(
    "/api/admin/feedback/cases",
    response_class=Response,
    responses={
        **responses(401, 403, 422),
        200: {
            "content": {JSON_LINES: {"schema": {"type": "string"}}},
            "description": 'One eval case a line: {"query", "expected_tools", "lang"}',
        },
    },
)
async def admin_cases(principal: Admin, session: SessionDep, rating: Rating = "up") -> Response:
    """The rated answers as `agent-chat eval --cases` cases (admin), one JSON object a line:
    the question before each answer and the tools that answer called."""
    found = await service.cases(session=session, rating=rating)
    body = "".join(json.dumps(case, ensure_ascii=False) + "\n" for case in found)
    return Response(
        content=body,
        media_type=JSON_LINES,
        headers={"Content-Disposition": f'attachment; filename="feedback-{rating}.jsonl"'},
    )
