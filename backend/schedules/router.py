"""Schedule routes (CONTRACT.md "Schedules"): own schedules, run now, runs; admins see all."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response, status

from backend.deps import Admin, CurrentPrincipal, SessionDep
from backend.errors import Forbidden, Unprocessable, responses
from backend.principal import Principal
from backend.schedules import service, timing
from backend.schedules.rules import Rules
from backend.schedules.schemas import (
    ScheduleCreate,
    SchedulePage,
    SchedulePreview,
    SchedulePreviewRequest,
    ScheduleRead,
    ScheduleRunPage,
    ScheduleRunStarted,
    ScheduleUpdate,
)

router = APIRouter(tags=["schedules"])


async def _writer(principal: CurrentPrincipal) -> Principal:
    """A read-only access token cannot make work that runs later with more rights."""
    if principal.token_scope == "read":
        raise Forbidden("A read-only access token cannot change schedules")
    return principal


Writer = Annotated[Principal, Depends(_writer)]


def _rules(request: Request) -> Rules:
    names = [w.name for w in request.app.state.workflows]
    return Rules(request.app.state.settings.schedules, names)


RulesDep = Annotated[Rules, Depends(_rules)]


@router.post(
    "/api/schedules",
    response_model=ScheduleRead,
    status_code=status.HTTP_201_CREATED,
    responses=responses(401, 403, 422),
)
async def create(body: ScheduleCreate, principal: Writer, session: SessionDep, rules: RulesDep):
    """A new schedule, with its own conversation (titled with its name)."""
    return await service.create(session=session, actor=principal, data=body, rules=rules)


@router.get("/api/schedules", response_model=SchedulePage, responses=responses(401))
async def list_own(principal: CurrentPrincipal, session: SessionDep):
    """The caller's schedules, newest first."""
    return await service.list_own(session=session, actor=principal)


@router.post(
    "/api/schedules/preview", response_model=SchedulePreview, responses=responses(401, 422)
)
async def preview(body: SchedulePreviewRequest, principal: CurrentPrincipal):
    """The next three firings of a cron (in a time zone) or an interval, from now."""
    del principal
    try:
        timing.zone(body.timezone)
        if body.cron is not None:
            timing.check_cron(body.cron)
    except timing.TimingError as exc:
        raise Unprocessable(str(exc)) from exc
    if (body.cron is None) == (body.every_s is None):
        raise Unprocessable("Give exactly one of cron and every_s")
    now = timing.now()
    plan = timing.Timing(body.cron, body.every_s, body.timezone, now)
    return SchedulePreview(upcoming=plan.upcoming(now, 3))


@router.get(
    "/api/schedules/{schedule_id}", response_model=ScheduleRead, responses=responses(401, 404)
)
async def get(schedule_id: uuid.UUID, principal: CurrentPrincipal, session: SessionDep):
    """One own schedule; someone else's is 404."""
    return await service.get(session=session, actor=principal, schedule_id=schedule_id)


@router.patch(
    "/api/schedules/{schedule_id}",
    response_model=ScheduleRead,
    responses=responses(401, 403, 404, 422),
)
async def update(
    schedule_id: uuid.UUID,
    body: ScheduleUpdate,
    principal: Writer,
    session: SessionDep,
    rules: RulesDep,
):
    """Change it (enable, disable, its timing, what it runs, where it reports)."""
    return await service.update(
        session=session, actor=principal, schedule_id=schedule_id, data=body, rules=rules
    )


@router.delete(
    "/api/schedules/{schedule_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    responses=responses(401, 403, 404),
)
async def delete(schedule_id: uuid.UUID, principal: Writer, session: SessionDep) -> Response:
    """Delete it: it never fires again."""
    await service.delete(session=session, actor=principal, schedule_id=schedule_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post(
    "/api/schedules/{schedule_id}/run",
    response_model=ScheduleRunStarted,
    status_code=status.HTTP_202_ACCEPTED,
    responses=responses(401, 403, 404),
)
async def run_now(schedule_id: uuid.UUID, principal: Writer, session: SessionDep, request: Request):
    """One firing now; its progress is in the runs."""
    return await service.run_now(
        session=session,
        actor=principal,
        schedule_id=schedule_id,
        launch=request.app.state.schedule_queue.launch,
    )


@router.get(
    "/api/schedules/{schedule_id}/runs",
    response_model=ScheduleRunPage,
    responses=responses(401, 404),
)
async def runs(schedule_id: uuid.UUID, principal: CurrentPrincipal, session: SessionDep):
    """Its runs, newest first, with their deliveries."""
    return await service.runs(session=session, actor=principal, schedule_id=schedule_id)


@router.get("/api/admin/schedules", response_model=SchedulePage, responses=responses(401, 403))
async def list_all(principal: Admin, session: SessionDep):
    """Every user's schedules (admin)."""
    del principal
    return await service.list_all(session=session)
