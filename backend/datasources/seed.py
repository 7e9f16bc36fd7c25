"""Demo data for datasources: the `sample` SQLite file of a small web shop."""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
from contextlib import closing
from pathlib import Path
from urllib.parse import quote

from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncSession

from backend.config import Settings
from backend.datasources import engines
from backend.datasources.models import AppliedMigration
from backend.datasources.sample_data import SCHEMA, generate

log = logging.getLogger("backend.datasources.seed")

SAMPLE = "sample"
# Stored in the file's PRAGMA user_version: bump it when the generated data changes.
SEED_VERSION = 20261101


async def seed(*, session: AsyncSession, settings: Settings) -> None:
    """Idempotent: safe to run on every start."""
    if SAMPLE not in settings.datasources:
        log.info("no '%s' datasource configured: demo data skipped", SAMPLE)
        return
    source = engines.get(settings, SAMPLE)
    if source.dialect != "sqlite":
        log.info("datasource '%s' is not SQLite: demo data skipped", SAMPLE)
        return
    if await asyncio.to_thread(ensure_sample_db, source.sqlite_path):
        # A fresh file has none of the pending migrations applied, whatever was recorded.
        await session.execute(delete(AppliedMigration).where(AppliedMigration.datasource == SAMPLE))


def ensure_sample_db(path: Path) -> bool:
    """Build the demo database at `path` unless it is already there; True when built."""
    if path.exists() and _version(path) == SEED_VERSION:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".building")
    partial.unlink(missing_ok=True)
    with closing(sqlite3.connect(partial)) as conn:
        conn.executescript(SCHEMA)
        for table, rows in generate(seed=42):
            marks = ", ".join("?" * len(rows[0]))
            conn.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)  # noqa: S608
        conn.execute(f"PRAGMA user_version = {SEED_VERSION}")
        conn.commit()
    # Readers never see a half-built file: the complete one replaces the old in one step.
    os.replace(partial, path)
    log.info("demo datasource built at %s", path)
    return True


def _version(path: Path) -> int | None:
    try:
        with closing(sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True)) as conn:
            row = conn.execute("PRAGMA user_version").fetchone()
    except sqlite3.Error:
        return None
    return int(row[0]) if row else None
