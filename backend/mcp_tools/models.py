"""External MCP servers an admin added: where, with which (sealed) headers, which tools."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import String, Text
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.orm import Mapped, mapped_column

from backend.db import Base, Timestamped


class McpServer(Timestamped, Base):
    __tablename__ = "mcp_servers"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    name: Mapped[str] = mapped_column(String(31), unique=True)
    url: Mapped[str] = mapped_column(String(2048))
    # The header values, sealed with the environment's key (agent_chat/sealed.py); the names
    # are kept apart so they can be shown.
    headers_sealed: Mapped[str | None] = mapped_column(Text, default=None)
    header_names: Mapped[list[str]] = mapped_column(ARRAY(String(128)), default=list)
    enabled_tools: Mapped[list[str] | None] = mapped_column(ARRAY(String(128)), default=None)
    confirm_tools: Mapped[list[str]] = mapped_column(ARRAY(String(128)), default=list)
    min_role: Mapped[str] = mapped_column(String(16), default="admin")
    # What the server last listed ([{name, description, input_schema}]) and whether it answered.
    tools: Mapped[list[dict[str, Any]]] = mapped_column(JSONB, default=list)
    status: Mapped[str] = mapped_column(String(16), default="unknown")
    checked_at: Mapped[datetime | None] = mapped_column(default=None)
