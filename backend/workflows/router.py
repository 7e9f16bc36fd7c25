"""Workflow routes: definitions (viewer), executions (owner reads; the agent writes)."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Path, Query, Request, status

from backend.deps import AgentPrincipal, CurrentPrincipal, SessionDep, Viewer
from backend.errors import responses
from backend.workflows import service
from backend.workflows.definition import WorkflowDefinition
from backend.workflows.models import WorkflowExecution
from backend.workflows.schemas import (
    DefinitionList,
    DefinitionRead,
    ExecutionCreate,
    ExecutionPage,
    ExecutionRead,
    ExecutionStatus,
    ExecutionUpdate,
    StepWrite,
)

router = APIRouter(prefix="/api/workflow", tags=["workflows"])
EXECUTION = "/executions/{execution_id}"
CONVERSATION = "/conversations/{conversation_id}"
MAX_EXECUTIONS = 100


def _definitions(request: Request) -> list[WorkflowDefinition]:
    found: list[WorkflowDefinition] = request.app.state.workflows
    return found


def _read(execution: WorkflowExecution) -> ExecutionRead:
    return ExecutionRead.model_validate(execution)


@router.get("/definitions", response_model=DefinitionList, responses=responses(401, 403))
async def definitions(request: Request, principal: Viewer) -> DefinitionList:
    """The workflows of `workflows/*.yaml`, validated at start-up, in file order."""
    items = [DefinitionRead.model_validate(d.model_dump()) for d in _definitions(request)]
    return DefinitionList(items=items)


@router.get(EXECUTION, response_model=ExecutionRead, responses=responses(401, 404, 422))
async def get(execution_id: int, principal: CurrentPrincipal, session: SessionDep):
    """One of the caller's executions with its steps."""
    return _read(await service.get(session=session, actor=principal, execution_id=execution_id))


@router.get(
    CONVERSATION + "/executions", response_model=ExecutionPage, responses=responses(401, 404, 422)
)
async def list_(
    conversation_id: uuid.UUID,
    principal: CurrentPrincipal,
    session: SessionDep,
    status_: Annotated[ExecutionStatus | None, Query(alias="status")] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_EXECUTIONS)] = 50,
) -> ExecutionPage:
    """The executions of one of the caller's conversations, newest first."""
    rows = await service.list_for_conversation(
        session=session,
        actor=principal,
        conversation_id=conversation_id,
        status=status_,
        limit=limit,
    )
    return ExecutionPage(items=[_read(r) for r in rows])


@router.post(
    "/executions",
    response_model=ExecutionRead,
    status_code=status.HTTP_201_CREATED,
    responses=responses(401, 403, 404, 409, 422),
)
async def create(
    body: ExecutionCreate, request: Request, principal: AgentPrincipal, session: SessionDep
):
    """Start recording an execution (agent service, on behalf of the conversation's owner)."""
    known = {d.name for d in _definitions(request)}
    return _read(await service.create(session=session, actor=principal, data=body, known=known))


@router.put(
    EXECUTION + "/steps/{step_index}",
    response_model=ExecutionRead,
    responses=responses(401, 403, 404, 409, 422),
)
async def record_step(
    execution_id: int,
    step_index: Annotated[int, Path(ge=0, le=100)],
    body: StepWrite,
    principal: AgentPrincipal,
    session: SessionDep,
):
    """Create or update one step (agent service)."""
    execution = await service.record_step(
        session=session,
        actor=principal,
        execution_id=execution_id,
        step_index=step_index,
        data=body,
    )
    return _read(execution)


@router.patch(EXECUTION, response_model=ExecutionRead, responses=responses(401, 403, 404, 409, 422))
async def update(
    execution_id: int, body: ExecutionUpdate, principal: AgentPrincipal, session: SessionDep
):
    """Pause, resume or finish an execution (agent service)."""
    execution = await service.update(
        session=session, actor=principal, execution_id=execution_id, data=body
    )
    return _read(execution)


@router.post(
    CONVERSATION + "/executions/cancel-waiting",
    response_model=ExecutionPage,
    responses=responses(401, 403, 404, 422),
)
async def cancel_waiting(
    conversation_id: uuid.UUID, principal: AgentPrincipal, session: SessionDep
) -> ExecutionPage:
    """Cancel executions waiting for a confirmation that a new message superseded (agent)."""
    rows = await service.cancel_waiting(
        session=session,
        actor=principal,
        conversation_id=conversation_id,
        reason="superseded by a new message",
    )
    return ExecutionPage(items=[_read(r) for r in rows])
