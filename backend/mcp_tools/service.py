"""The audit row of one tool call the agent served outside a chat (the MCP server): what was
called, by whom, through which channel, and how it ended. The backend's own rows (a deploy, a
query) are written by the operation itself; this row also covers calls refused before any
operation (a tool not allowed, a confirmation declined)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from backend.audit import service as audit
from backend.mcp_tools.schemas import ToolCallRecord
from backend.principal import Principal


async def record_call(*, session: AsyncSession, actor: Principal, data: ToolCallRecord) -> None:
    audit.record(
        session=session,
        actor=actor,
        action="agent.tool_call",
        resource_type="tool",
        resource_id=data.tool,
        outcome=data.outcome,
        details=data.model_dump(exclude={"tool", "outcome"}, exclude_none=True),
    )
    await session.commit()
