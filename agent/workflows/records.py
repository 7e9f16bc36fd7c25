"""The backend's record of workflow executions (agent-only writes, dual identity)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from agent import writes
from agent.backend_client import BackendClient
from agent.context import Context

BASE = "/api/workflow"


def now() -> str:
    return datetime.now(UTC).isoformat()


class Records:
    """One execution's rows, written through the backend as the conversation's owner."""

    def __init__(self, client: BackendClient, context: Context) -> None:
        self.client = client
        self.context = context

    async def start(self, workflow: str, request: dict[str, Any]) -> int:
        body = {
            "conversation_id": self.context.conversation_id,
            "workflow_name": workflow,
            "mode": "yaml",
            "input": request,
        }
        created = await self.client.call(self.context, "POST", f"{BASE}/executions", json=body)
        return int(created["id"])

    async def step(self, execution_id: int, index: int, **fields: Any) -> None:
        """Store one step's row (a PUT: sent again while the backend is away, it is one row)."""
        path = f"{BASE}/executions/{execution_id}/steps/{index}"
        await writes.send(self.client, self.context, "PUT", path, json=fields)

    async def update(self, execution_id: int, status: str, **fields: Any) -> dict[str, Any]:
        body = {"status": status, **{k: v for k, v in fields.items() if v is not None}}
        path = f"{BASE}/executions/{execution_id}"
        result: dict[str, Any] = await self.client.call(self.context, "PATCH", path, json=body)
        return result

    async def waiting(self) -> dict[str, Any] | None:
        """The conversation's execution that waits for a confirmation, if any."""
        path = f"{BASE}/conversations/{self.context.conversation_id}/executions"
        body = await self.client.call(
            self.context, "GET", path, params={"status": "waiting", "limit": 1}
        )
        items = body.get("items", [])
        return items[0] if items else None
