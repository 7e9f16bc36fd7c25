"""Alembic entry points used by the CLI and the tests."""

from __future__ import annotations

from alembic import command
from alembic.config import Config

from backend.config import ROOT


def alembic_config(database_url: str) -> Config:
    config = Config(str(ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(ROOT / "migrations"))
    config.set_main_option("sqlalchemy.url", database_url.replace("%", "%%"))
    return config


def upgrade(database_url: str) -> None:
    """Upgrade to head; a no-op when already there."""
    command.upgrade(alembic_config(database_url), "head")


def check(database_url: str) -> None:
    """Raise when the ORM models and the migrated schema differ."""
    command.check(alembic_config(database_url))
