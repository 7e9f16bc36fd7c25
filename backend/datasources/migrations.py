"""Pending schema migrations shipped as SQL files, and running one in a transaction.

Layout: `backend/datasources/pending/<datasource>/<YYYYMMDD_name>.sql`; the first line, when it
is a `--` comment, describes the migration.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from backend.codes import Code
from backend.config import Settings
from backend.datasources import engines
from backend.datasources.engines import Datasource
from backend.errors import NotFound, Unprocessable

PENDING_ROOT = Path(__file__).resolve().parent / "pending"
MIGRATION_ID = re.compile(r"^[0-9]{8}_[a-z0-9_]{1,100}$")


@dataclass(frozen=True)
class Migration:
    id: str
    datasource: str
    description: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()


class MigrationFailed(Unprocessable):
    code = Code.MIGRATION_FAILED


def _load(path: Path, datasource: str) -> Migration:
    sql = path.read_text(encoding="utf-8")
    first = sql.lstrip().splitlines()[0] if sql.strip() else ""
    description = first[2:].strip() if first.startswith("--") else ""
    return Migration(id=path.stem, datasource=datasource, description=description, sql=sql)


def discover(datasource: str) -> list[Migration]:
    """Every migration shipped for `datasource` (a configured name), oldest first."""
    folder = PENDING_ROOT / datasource
    if not folder.is_dir():
        return []
    paths = sorted(p for p in folder.glob("*.sql") if MIGRATION_ID.match(p.stem))
    return [_load(p, datasource) for p in paths]


def find(datasource: str, migration_id: str) -> Migration:
    """One shipped migration, or NotFound."""
    for migration in discover(datasource):
        if migration.id == migration_id:
            return migration
    raise NotFound(
        f"Migration '{migration_id}' does not exist for datasource '{datasource}'",
        details={"datasource": datasource, "migration_id": migration_id},
    )


def run(settings: Settings, source: Datasource, migration: Migration) -> None:
    """Apply `migration` in one transaction on the datasource (blocking: call in a thread)."""
    engine = engines.writable_engine(settings, source)
    try:
        raw = engine.raw_connection()
    except engines.CONNECT_ERRORS as exc:  # the driver's text may name hosts: not shown
        engine.dispose()
        raise MigrationFailed(f"Could not connect to datasource '{source.name}'") from exc
    try:
        conn: Any = raw.driver_connection
        if source.dialect == "sqlite":
            _run_sqlite(conn, migration.sql)
        else:
            _run_postgres(conn, migration.sql)
    finally:
        raw.close()
        engine.dispose()


def _run_sqlite(conn: sqlite3.Connection, script: str) -> None:
    conn.isolation_level = None  # explicit BEGIN/COMMIT: DDL included in the transaction
    try:
        conn.executescript("BEGIN IMMEDIATE;\n" + script + "\n;COMMIT;")
    except sqlite3.Error as exc:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise MigrationFailed(f"Migration failed and was rolled back: {exc}") from exc


def _run_postgres(conn: psycopg.Connection[Any], script: str) -> None:
    try:
        with conn.cursor() as cursor:
            # No parameters: psycopg sends the script as one multi-statement query.
            cursor.execute(script.encode())
        conn.commit()
    except psycopg.Error as exc:
        conn.rollback()
        message = (exc.diag.message_primary if exc.diag else None) or type(exc).__name__
        raise MigrationFailed(f"Migration failed and was rolled back: {message}") from exc
