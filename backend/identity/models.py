"""Users and service clients: who may act."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import DateTime, String, UniqueConstraint
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import Mapped, mapped_column

from backend.db import Base, Timestamped


class User(Timestamped, Base):
    __tablename__ = "users"
    # A directory or provider person is keyed by (issuer, subject): (OIDC issuer, `sub`) or
    # ("ldap", DN); local accounts leave both empty (NULLs never collide).
    __table_args__ = (UniqueConstraint("external_issuer", "external_subject"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    username: Mapped[str] = mapped_column(String(64), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    roles: Mapped[list[str]] = mapped_column(ARRAY(String(16)))
    is_active: Mapped[bool] = mapped_column(default=True)
    source: Mapped[str] = mapped_column(String(8), default="local", server_default="local")
    external_issuer: Mapped[str | None] = mapped_column(String(255), default=None)
    external_subject: Mapped[str | None] = mapped_column(String(1024), default=None)
    last_sign_in_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)


class ServiceClient(Timestamped, Base):
    __tablename__ = "service_clients"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    client_id: Mapped[str] = mapped_column(String(64), unique=True)
    secret_hash: Mapped[str] = mapped_column(String(255))
    description: Mapped[str] = mapped_column(String(255), default="")
    is_active: Mapped[bool] = mapped_column(default=True)
