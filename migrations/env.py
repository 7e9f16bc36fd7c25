"""Alembic environment: runs on a sync psycopg connection against DATABASE_URL."""

from __future__ import annotations

import os

from alembic import context
from sqlalchemy import create_engine, pool

from backend.db import sync_url
from backend.models import Base

config = context.config
target_metadata = Base.metadata
# Tables owned by other components in the same database (LangGraph's checkpointer).
FOREIGN_TABLES = {"checkpoints", "checkpoint_writes", "checkpoint_blobs", "checkpoint_migrations"}


# procrastinate's queue (schedules) keeps its own tables, all named procrastinate_*.
FOREIGN_PREFIX = "procrastinate_"


def include_object(obj, name, type_, reflected, compare_to):  # type: ignore[no-untyped-def]
    foreign = name in FOREIGN_TABLES or str(name).startswith(FOREIGN_PREFIX)
    return not (type_ == "table" and reflected and compare_to is None and foreign)


def _url() -> str:
    """The URL set by backend.migrate, or DATABASE_URL for the plain `alembic` command."""
    return config.get_main_option("sqlalchemy.url") or os.environ.get("DATABASE_URL", "")


def run_migrations_offline() -> None:
    context.configure(
        url=_url(),
        target_metadata=target_metadata,
        literal_binds=True,
        include_object=include_object,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    url = sync_url(_url())
    engine = create_engine(url, poolclass=pool.NullPool)
    with engine.connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            include_object=include_object,
            compare_type=True,
        )
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
