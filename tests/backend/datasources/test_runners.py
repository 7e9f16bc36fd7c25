"""The read-only path and the migration runner called in-process against real databases:
unreachable datasources, and the Postgres migration transaction (no shipped file needs it)."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from sqlalchemy.engine import make_url

from backend.config import Settings
from backend.datasources import catalog, engines, migrations
from backend.datasources.migrations import Migration, MigrationFailed
from backend.datasources.readonly import DatasourceUnavailable, execute_readonly
from backend.datasources.seed import ensure_sample_db


@pytest.fixture()
def settings(warehouse: str, tmp_path: Path) -> Settings:
    ensure_sample_db(tmp_path / "shop.db")
    unreachable = make_url(warehouse).set(port=1, password="s3cret-pw")
    return Settings(
        data_dir=tmp_path,
        datasources={
            "warehouse": {"url": warehouse},
            "shop": {"url": "sqlite:///{data_dir}/shop.db"},
            "gone": {"url": f"sqlite:///{tmp_path}/missing/nothing.db"},
            "down": {"url": unreachable.render_as_string(hide_password=False)},
            "odd": {"url": "mysql://user@localhost/db"},
        },
    )


@pytest.mark.parametrize("name", ["gone", "down"])
async def test_an_unreachable_datasource_is_unavailable_without_naming_its_url(settings, name):
    with pytest.raises(DatasourceUnavailable) as caught:
        await execute_readonly(settings=settings, datasource=name, sql="SELECT 1")
    assert caught.value.status_code == 503 and caught.value.code == "SQL_ERROR"
    assert caught.value.message == f"Could not connect to datasource '{name}'"
    with pytest.raises(DatasourceUnavailable):
        await catalog.tables(settings=settings, datasource=name)


async def test_an_unsupported_dialect_is_listed_but_refused_for_queries(settings):
    assert "odd" in [s.name for s in engines.all_(settings)]
    with pytest.raises(Exception, match="unsupported dialect 'mysql'"):
        await execute_readonly(settings=settings, datasource="odd", sql="SELECT 1")


async def test_the_data_dir_placeholder_resolves_and_engines_are_reused(settings, tmp_path):
    result = await execute_readonly(settings=settings, datasource="shop", sql="SELECT 1 AS x")
    assert result.rows == [[1]]
    source = engines.get(settings, "shop")
    assert source.sqlite_path == tmp_path / "shop.db"
    assert engines.readonly_engine(settings, source) is engines.readonly_engine(settings, source)


def test_a_postgres_migration_commits_all_its_statements(settings, warehouse):
    script = "CREATE TABLE mig_ok (id int);\nINSERT INTO mig_ok VALUES (1), (2);\n"
    migration = Migration(id="20261201_ok", datasource="warehouse", description="", sql=script)
    try:
        migrations.run(settings, engines.get(settings, "warehouse"), migration)
        with psycopg.connect(warehouse) as conn:
            assert conn.execute("SELECT count(*) FROM mig_ok").fetchone() == (2,)
    finally:
        with psycopg.connect(warehouse, autocommit=True) as conn:
            conn.execute("DROP TABLE IF EXISTS mig_ok")


def test_a_failing_postgres_migration_leaves_nothing_behind(settings, warehouse):
    script = "CREATE TABLE mig_bad (id int);\nINSERT INTO mig_bad VALUES (1);\nSELECT * FROM nope;"
    migration = Migration(id="20261201_bad", datasource="warehouse", description="", sql=script)
    with pytest.raises(MigrationFailed) as caught:
        migrations.run(settings, engines.get(settings, "warehouse"), migration)
    assert caught.value.code == "MIGRATION_FAILED"
    assert 'relation "nope" does not exist' in caught.value.message
    with psycopg.connect(warehouse) as conn:
        assert conn.execute("SELECT to_regclass('mig_bad')").fetchone() == (None,)


def test_a_migration_on_an_unreachable_datasource_fails_cleanly(settings):
    migration = Migration(id="20261201_x", datasource="down", description="", sql="SELECT 1")
    with pytest.raises(MigrationFailed, match="Could not connect to datasource 'down'"):
        migrations.run(settings, engines.get(settings, "down"), migration)
