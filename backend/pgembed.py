"""An embedded PostgreSQL (pgserver wheel) under the data dir when DATABASE_URL is unset."""

from __future__ import annotations

import logging
from pathlib import Path

import psycopg

log = logging.getLogger("backend.pgembed")
DATABASE = "agentchat"


def embedded_url(data_dir: Path, database: str = DATABASE) -> str:
    """Start (or reuse) the embedded server and make sure `database` exists; return its URL.

    The server stops when the last process that asked for it exits (pgserver tracks them).
    """
    import pgserver  # heavy import, only when the embedded server is wanted

    server = pgserver.get_server(data_dir / "pg", cleanup_mode="stop")
    admin_url = server.get_uri()
    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", (database,)
        ).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{database}"')
    log.info("embedded postgres ready under %s", data_dir / "pg")
    return server.get_uri(database)


def resolve_database_url(database_url: str | None, data_dir: Path) -> str:
    return database_url or embedded_url(data_dir)
