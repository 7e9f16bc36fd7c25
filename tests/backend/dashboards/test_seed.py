"""The demo dashboards: seeded once with a first validation; seeding again changes nothing."""

from __future__ import annotations

import os

from tests.backend.support import scalar
from tests.support.processes import run_cli

COUNTS = (
    "SELECT (SELECT count(*) FROM dashboards), (SELECT count(*) FROM dashboard_versions), "
    "(SELECT count(*) FROM dashboard_deployments), (SELECT count(*) FROM dashboard_validation_runs)"
)


def seed_status(sql, dashboard_id):
    return scalar(
        sql,
        "SELECT status FROM dashboard_validation_runs WHERE dashboard_id = %s "
        "AND triggered_by = 'seed'",
        dashboard_id,
    )


def test_the_seed_validates_every_demo_dashboard_once(api, sql):
    assert scalar(sql, "SELECT count(*) FROM dashboards WHERE id < 10000") >= 12
    unvalidated = scalar(
        sql,
        "SELECT count(*) FROM dashboards d WHERE d.id < 10000 AND NOT EXISTS "
        "(SELECT 1 FROM dashboard_validation_runs r WHERE r.dashboard_id = d.id "
        "AND r.triggered_by = 'seed')",
    )
    assert unvalidated == 0
    assert seed_status(sql, 42) == "ok"
    assert seed_status(sql, 17) == "failing"
    assert seed_status(sql, 29) == "warning"
    served = scalar(
        sql,
        "SELECT count(*) FROM dashboard_environments e JOIN dashboards d ON d.id = e.dashboard_id "
        "WHERE d.id < 10000 AND e.version_id = d.main_version_id",
    )
    assert served == 2 * scalar(sql, "SELECT count(*) FROM dashboards WHERE id < 10000")


def test_seeding_again_changes_nothing(api, sql, seeded):
    before = sql.execute(COUNTS).fetchone()
    run_cli(["seed"], {**os.environ, **seeded})
    assert sql.execute(COUNTS).fetchone() == before
