"""A throwaway Postgres database per test session: TEST_DATABASE_URL's server, or embedded."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import psycopg
from sqlalchemy.engine import make_url

from backend.pgembed import embedded_url

ROOT = Path(__file__).resolve().parents[2]


def server_url() -> str:
    """The admin URL of the server the tests use."""
    return os.environ.get("TEST_DATABASE_URL") or embedded_url(ROOT / ".data" / "test", "postgres")


def create_database(admin_url: str) -> str:
    name = f"agentchat_test_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = make_url(admin_url).set(database=name)
    return url.render_as_string(hide_password=False)


def drop_database(admin_url: str, database_url: str) -> None:
    name = make_url(database_url).database
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def connect(database_url: str) -> psycopg.Connection:
    """A plain psycopg connection for asserting rows (autocommit)."""
    return psycopg.connect(database_url, autocommit=True)
