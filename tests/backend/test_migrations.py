"""Alembic migrations produce exactly the ORM schema; migrate and seed are idempotent."""

from __future__ import annotations

import os

import psycopg
from alembic.script import ScriptDirectory

from backend.migrate import alembic_config, check
from tests.conftest import PASSWORDS
from tests.support.processes import run_cli

SCHEMA = """
SELECT table_name, column_name, data_type, is_nullable, column_default
FROM information_schema.columns WHERE table_schema = 'public'
ORDER BY table_name, column_name
"""
INDEXES = "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1"


def test_the_migrated_schema_matches_the_orm_models(database_url):
    check(database_url)  # alembic check: raises when autogenerate would emit any operation


def test_the_core_constraints_follow_the_naming_convention(sql):
    names = {
        row[0]
        for row in sql.execute(
            "SELECT conname FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid"
            " WHERE t.relname IN ('users', 'agent_conversations', 'agent_messages')"
        )
    }
    assert {
        "pk_users",
        "uq_users_username",
        "pk_agent_conversations",
        "fk_agent_conversations_owner_id_users",
        "fk_agent_messages_conversation_id_agent_conversations",
    } <= names


def _state(sql: psycopg.Connection) -> tuple[object, ...]:
    versions = sorted(r[0] for r in sql.execute("SELECT version_num FROM alembic_version"))
    return (
        versions,
        sql.execute(SCHEMA).fetchall(),
        sql.execute(INDEXES).fetchall(),
    )


def test_migrate_again_is_a_no_op_at_head(backend_env, database_url, sql):
    """The session fixture migrated once with backend.migrate.upgrade; the CLI runs it again."""
    heads = set(ScriptDirectory.from_config(alembic_config(database_url)).get_heads())
    before = _state(sql)
    assert set(before[0]) == heads  # type: ignore[arg-type]
    run_cli(["migrate"], {**os.environ, **backend_env})
    assert _state(sql) == before


def test_seed_twice_leaves_one_of_each_demo_user_and_their_passwords_working(api, seeded, sql):
    run_cli(["seed"], {**os.environ, **seeded})
    rows = sql.execute(
        "SELECT username, count(*), min(roles::text) FROM users"
        " WHERE username IN ('admin', 'editor', 'viewer') GROUP BY username ORDER BY username"
    ).fetchall()
    assert rows == [("admin", 1, "{admin}"), ("editor", 1, "{editor}"), ("viewer", 1, "{viewer}")]
    clients = sql.execute(
        "SELECT count(*) FROM service_clients WHERE client_id = 'agent-chat'"
    ).fetchone()
    assert clients == (1,)
    for name, password in PASSWORDS.items():
        login = api.post("/api/auth/login", json={"username": name, "password": password})
        assert login.status_code == 200, login.text
