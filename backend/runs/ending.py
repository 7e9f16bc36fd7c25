"""A run's end in one request: its history row, debug record and usage, then the lease's release.

The agent used to send these as four requests at the end of every turn (a message append, a
debug record PUT, a usage POST, a lease DELETE), each paying for its own authentication,
ownership check and round trip. Each part is stored as its own route stores it (same service,
same audit rows, same transaction per part), in the order the routes were called: the row
first, then its debug record, then the usage, then the release, so a new message sent after
the release always finds the answer in the history.

A part that is refused (invalid, or the conversation was archived under the run) is named in
the answer's `errors` and the others go on. Sent again with the same `Idempotency-Key` (its
answer was lost), every part is stored once: the row by that key, the debug record by its
row, each model call by its own key, and the release by its holder.
"""

from __future__ import annotations

import uuid

from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession

from backend.codes import Code
from backend.conversations import service
from backend.conversations.schemas import MessageCreate
from backend.debug import service as debug_service
from backend.debug.schemas import DebugRecordWrite
from backend.errors import AppError
from backend.principal import Principal
from backend.runs import lease
from backend.runs.schemas import PartError, RunEnd, RunEndRead
from backend.usage import service as usage_service
from backend.usage.schemas import UsageWrite


def _refused(exc: ValidationError | AppError) -> PartError:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "body"
        return PartError(code=Code.INVALID_INPUT, message=f"{where}: {first.get('msg', '')}"[:300])
    return PartError(code=exc.code, message=exc.message)


async def end_run(
    *,
    session: AsyncSession,
    actor: Principal,
    conversation_id: uuid.UUID,
    data: RunEnd,
    idempotency_key: str | None = None,
) -> RunEndRead:
    """Store the parts of `data` in order; someone else's (or an unknown) conversation is
    NotFound before anything is stored."""
    await service.get(session=session, actor=actor, conversation_id=conversation_id)
    answer = RunEndRead()
    if data.message is not None:
        try:
            message = await service.append_message(
                session=session,
                actor=actor,
                conversation_id=conversation_id,
                data=MessageCreate.model_validate(data.message),
                idempotency_key=idempotency_key,
            )
            answer.message_id = message.id
        except (ValidationError, AppError) as exc:
            await session.rollback()
            answer.errors["message"] = _refused(exc)
    if data.debug is not None:
        if answer.message_id is None:
            answer.errors["debug"] = PartError(
                code=Code.NO_MESSAGE, message="A debug record needs the turn's history row"
            )
        else:
            try:
                await debug_service.put(
                    session=session,
                    actor=actor,
                    message_id=answer.message_id,
                    data=DebugRecordWrite.model_validate(data.debug),
                )
            except (ValidationError, AppError) as exc:
                await session.rollback()
                answer.errors["debug"] = _refused(exc)
    if data.usage:
        try:
            calls = UsageWrite.model_validate({"calls": data.usage}).calls
            answer.recorded, _ = await usage_service.record(
                session=session, actor=actor, calls=calls
            )
        except (ValidationError, AppError) as exc:
            await session.rollback()
            answer.errors["usage"] = _refused(exc)
    if data.holder is not None:
        answer.released = await lease.release_lease(
            session=session, actor=actor, conversation_id=conversation_id, holder=data.holder
        )
    return answer
