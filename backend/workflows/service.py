"""Workflow executions: the agent records them (dual identity), their owner reads them.

Ownership is the conversation's: someone else's execution or conversation is NotFound.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from backend.audit import service as audit
from backend.codes import Code
from backend.conversations import service as conversations
from backend.conversations.models import Conversation, Message
from backend.db import utcnow
from backend.errors import Conflict, NotFound, Unprocessable
from backend.principal import Principal
from backend.workflows.models import WorkflowExecution, WorkflowStep
from backend.workflows.schemas import ExecutionCreate, ExecutionUpdate, StepWrite

TERMINAL = frozenset({"completed", "failed", "cancelled"})
AUDITED_STEP_STATUSES = frozenset({"waiting", "completed", "failed"})


def _audit(
    session: AsyncSession,
    actor: Principal,
    action: str,
    execution: WorkflowExecution,
    **details: object,
) -> None:
    audit.record(
        session=session,
        actor=actor,
        action=action,
        resource_type="workflow_execution",
        resource_id=str(execution.id),
        details={"conversation_id": str(execution.conversation_id), **details},
    )


async def get(*, session: AsyncSession, actor: Principal, execution_id: int) -> WorkflowExecution:
    """The actor's execution (through its conversation); anyone else's is NotFound."""
    execution = await session.scalar(
        select(WorkflowExecution)
        .join(Conversation, Conversation.id == WorkflowExecution.conversation_id)
        .where(WorkflowExecution.id == execution_id, Conversation.owner_id == actor.user_id)
    )
    if execution is None:
        raise NotFound("Workflow execution not found")
    return execution


async def list_for_conversation(
    *,
    session: AsyncSession,
    actor: Principal,
    conversation_id: uuid.UUID,
    status: str | None,
    limit: int,
) -> list[WorkflowExecution]:
    """The conversation's executions, newest first."""
    await conversations.get(session=session, actor=actor, conversation_id=conversation_id)
    query = select(WorkflowExecution).where(WorkflowExecution.conversation_id == conversation_id)
    if status is not None:
        query = query.where(WorkflowExecution.status == status)
    order = (WorkflowExecution.started_at.desc(), WorkflowExecution.id.desc())
    return list(await session.scalars(query.order_by(*order).limit(limit)))


async def create(
    *, session: AsyncSession, actor: Principal, data: ExecutionCreate, known: Collection[str]
) -> WorkflowExecution:
    """Start an execution of a defined workflow in one of the actor's conversations."""
    conversation = await conversations.get(
        session=session, actor=actor, conversation_id=data.conversation_id
    )
    if conversation.is_archived:
        raise Conflict("Conversation is archived", code=Code.CONVERSATION_ARCHIVED)
    if data.workflow_name not in known:
        raise Unprocessable(
            f"There is no workflow named {data.workflow_name!r}",
            code=Code.UNKNOWN_WORKFLOW,
            details={"workflow_name": data.workflow_name},
        )
    execution = WorkflowExecution(
        conversation_id=data.conversation_id,
        workflow_name=data.workflow_name,
        mode=data.mode,
        status="running",
        input=data.input,
        steps=[],
    )
    session.add(execution)
    await session.flush()
    _audit(session, actor, "workflow.execution_start", execution, workflow=data.workflow_name)
    await session.commit()
    return execution


async def record_step(
    *,
    session: AsyncSession,
    actor: Principal,
    execution_id: int,
    step_index: int,
    data: StepWrite,
) -> WorkflowExecution:
    """Create or update step `step_index` of a running (or waiting) execution."""
    execution = await get(session=session, actor=actor, execution_id=execution_id)
    if execution.status in TERMINAL:
        raise Conflict(
            f"The execution is {execution.status}; its steps cannot change",
            code=Code.EXECUTION_CONFLICT,
            details={"status": execution.status},
        )
    step = next((s for s in execution.steps if s.step_index == step_index), None)
    if step is None:
        step = WorkflowStep(step_index=step_index)
        execution.steps.append(step)
    step.step_type, step.step_name, step.status = data.step_type, data.step_name, data.status
    step.input, step.output = data.input, data.output
    step.error = data.error.model_dump() if data.error else None
    step.started_at = data.started_at or step.started_at or utcnow()
    step.finished_at = data.finished_at
    if data.status in AUDITED_STEP_STATUSES:
        _audit(
            session,
            actor,
            "workflow.step_" + data.status,
            execution,
            step_index=step_index,
            step_name=data.step_name,
            **({"error_code": data.error.code} if data.error else {}),
        )
    await session.commit()
    return execution


async def update(
    *, session: AsyncSession, actor: Principal, execution_id: int, data: ExecutionUpdate
) -> WorkflowExecution:
    """Change an execution's status (atomically against `expected_status` when given)."""
    execution = await get(session=session, actor=actor, execution_id=execution_id)
    # Lock the row: two decisions racing on a paused run must not both resume it.
    await session.refresh(execution, with_for_update=True)
    if data.expected_status is not None and execution.status != data.expected_status:
        raise Conflict(
            f"The execution is {execution.status}, not {data.expected_status}",
            code=Code.EXECUTION_CONFLICT,
            details={"status": execution.status},
        )
    if execution.status in TERMINAL:
        raise Conflict(
            f"The execution is already {execution.status}",
            code=Code.EXECUTION_CONFLICT,
            details={"status": execution.status},
        )
    if data.message_id is not None:
        await _check_message(session, execution, data.message_id)
        execution.message_id = data.message_id
    execution.status = data.status
    execution.pending = data.pending if data.status == "waiting" else None
    if data.final_answer is not None:
        execution.final_answer = data.final_answer
    if data.error is not None:
        execution.error = data.error.model_dump()
    if data.status in TERMINAL:
        execution.finished_at = utcnow()
    _audit(session, actor, "workflow.execution_" + data.status, execution)
    await session.commit()
    return execution


async def _check_message(
    session: AsyncSession, execution: WorkflowExecution, message_id: int
) -> None:
    message = await session.get(Message, message_id)
    if message is None or message.conversation_id != execution.conversation_id:
        raise Unprocessable(
            "message_id is not a message of this execution's conversation",
            details={"message_id": message_id},
        )


async def cancel_waiting(
    *, session: AsyncSession, actor: Principal, conversation_id: uuid.UUID, reason: str
) -> list[WorkflowExecution]:
    """Cancel the conversation's executions that wait for a confirmation (a new message
    superseded them); the cancelled ones, with the call each was waiting for."""
    await conversations.get(session=session, actor=actor, conversation_id=conversation_id)
    waiting = list(
        await session.scalars(
            select(WorkflowExecution)
            .where(
                WorkflowExecution.conversation_id == conversation_id,
                WorkflowExecution.status == "waiting",
            )
            .with_for_update()
        )
    )
    now = utcnow()
    for execution in waiting:
        for step in execution.steps:
            if step.status in ("running", "waiting"):
                step.status, step.finished_at = "failed", now
                step.error = {"code": Code.REJECTED, "message": f"Not run: {reason}."}
        execution.status, execution.finished_at = "cancelled", now
        execution.error = {"code": Code.SUPERSEDED, "message": reason}
        _audit(session, actor, "workflow.execution_cancelled", execution, reason=reason)
    await session.commit()
    return waiting
