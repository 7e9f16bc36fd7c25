"""One row per (user, key): the write's fingerprint and, once it is answered, its answer.

The row is inserted in the write's own transaction (service.claim, from the principal
dependency), so it exists exactly when the write was committed; the answer is filled in right
after the response is built (middleware.IdempotencyMiddleware). A row without an answer is a
write still running, or one whose process died between its commit and its answer.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import ForeignKey, LargeBinary, String
from sqlalchemy.orm import Mapped, mapped_column

from backend.db import Base, utcnow


class IdempotencyKey(Base):
    __tablename__ = "idempotency_keys"

    user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    # sha256 of the method, path, query and body: the same key with another request is refused
    fingerprint: Mapped[str] = mapped_column(String(64))
    status_code: Mapped[int | None] = mapped_column(default=None)
    content_type: Mapped[str | None] = mapped_column(String(200), default=None)
    body: Mapped[bytes | None] = mapped_column(LargeBinary, default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
