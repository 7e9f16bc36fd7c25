"""A deterministic two-week operational history for the demo, relative to a given moment.

The story it tells: dashboard 42 "Sales overview" is healthy and deployed regularly; an events
schema change three days ago renamed `campaign_id` to `utm_campaign` and broke dashboard 17
"Marketing funnel"; dashboard 23 "Inventory health" was deployed five days ago against the table
`inventory_snapshots`, whose datasource migration 20261101_inventory_snapshots was never applied.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

DAYS = 14
SALES, FUNNEL, INVENTORY = 42, 17, 23
TITLES = {SALES: "Sales overview", FUNNEL: "Marketing funnel", INVENTORY: "Inventory health"}
CHART_COUNTS = {SALES: 3, FUNNEL: 3, INVENTORY: 2}
# The sources the live code writes with, so a `source` filter finds old and new entries alike.
VALIDATION, DEPLOYMENT, DATASOURCES, AUTH = (
    "dashboards.validation",
    "dashboards.deployment",
    "datasources",
    "auth",
)
RENAME_AGO = timedelta(days=3, hours=2)
INVENTORY_DEPLOY_AGO = timedelta(days=5, hours=4)
PENDING_MIGRATION = "20261101_inventory_snapshots"
INDEX_MIGRATION = "20261115_orders_order_date_index"
USERS = ("admin", "editor", "viewer")


@dataclass(frozen=True)
class Entry:
    at: datetime
    level: str
    source: str
    message: str
    dashboard_id: int | None = None
    details: dict[str, Any] = field(default_factory=dict)


def _validation(at: datetime, dashboard: int, rng: random.Random, now: datetime) -> Entry:
    title, charts = TITLES[dashboard], CHART_COUNTS[dashboard]
    elapsed = rng.randint(180, 2400)
    base = {"dashboard": title, "charts": charts, "elapsed_ms": elapsed, "trigger": "schedule"}
    if dashboard == FUNNEL and at >= now - RENAME_AGO:
        return Entry(
            at,
            "error",
            VALIDATION,
            f"Dashboard {dashboard} ({title}): chart 'Conversions by campaign' failed "
            "validation: no such column: campaign_id",
            dashboard,
            {
                **base,
                "chart": "Conversions by campaign",
                "chart_key": "conversions_by_campaign",
                "datasource": "sample",
                "error": "no such column: campaign_id",
                "hint": "events.campaign_id was renamed to utm_campaign",
            },
        )
    if dashboard == INVENTORY and at >= now - INVENTORY_DEPLOY_AGO:
        return Entry(
            at,
            "error",
            VALIDATION,
            f"Dashboard {dashboard} ({title}): chart 'Stock on hand' failed validation: "
            "no such table: inventory_snapshots",
            dashboard,
            {
                **base,
                "chart": "Stock on hand",
                "chart_key": "stock_on_hand",
                "datasource": "sample",
                "error": "no such table: inventory_snapshots",
                "pending_migration": PENDING_MIGRATION,
            },
        )
    message = f"Dashboard {dashboard} ({title}): validation passed, {charts} charts ok"
    return Entry(at, "info", VALIDATION, message, dashboard, base)


def _validations(now: datetime, rng: random.Random) -> list[Entry]:
    """Scheduled validation of the three dashboards every six hours."""
    entries = []
    for slot in range(DAYS * 4):
        at = now - timedelta(hours=6 * slot + 1, minutes=rng.randint(0, 20))
        for dashboard in (SALES, FUNNEL, INVENTORY):
            entries.append(_validation(at + timedelta(seconds=dashboard), dashboard, rng, now))
    return entries


def _logins(now: datetime, rng: random.Random) -> list[Entry]:
    entries = []
    for day in range(DAYS):
        for _ in range(rng.randint(3, 6)):
            at = now - timedelta(days=day, hours=rng.randint(0, 23), minutes=rng.randint(0, 59))
            user = rng.choice(USERS)
            entries.append(Entry(at, "info", AUTH, f"User {user} logged in", None, {"user": user}))
        if day % 4 == 1:
            at = now - timedelta(days=day, hours=rng.randint(0, 23))
            entries.append(
                Entry(
                    at,
                    "warning",
                    AUTH,
                    "Failed login for user viewer: wrong password",
                    None,
                    {"user": "viewer", "reason": "invalid_credentials"},
                )
            )
    return entries


def _deploy(at: datetime, dashboard: int, version: int, env: str, **extra: Any) -> Entry:
    ref = extra.get("ref", "main")
    message = (
        f"Dashboard {dashboard} ({TITLES[dashboard]}) version {version} ({ref}) "
        f"deployed to {env} by admin"
    )
    details = {"version_id": version, "environment": env, "actor": "admin", **extra}
    return Entry(at, "info", DEPLOYMENT, message, dashboard, details)


def _sales_deployments(now: datetime) -> list[Entry]:
    """Dashboard 42 goes to staging, then production, every few days; one rollback."""
    entries = []
    for n, ago in enumerate((12, 9, 6, 2)):
        at = now - timedelta(days=ago)
        entries.append(_deploy(at - timedelta(hours=1), SALES, 4 + n, "staging", ref="main"))
        entries.append(_deploy(at, SALES, 4 + n, "production", ref="main"))
    rollback = _deploy(now - timedelta(days=8), SALES, 4, "production", ref="4")
    details = {**rollback.details, "reason": "rollback", "previous_version_id": 5}
    message = rollback.message + ": rollback from version 5"
    entries.append(Entry(rollback.at, "warning", DEPLOYMENT, message, SALES, details))
    return entries


def _incident_deployments(now: datetime) -> list[Entry]:
    """Dashboard 23 forced out against a missing table; dashboard 17 refused while failing."""
    forced = _deploy(now - INVENTORY_DEPLOY_AGO, INVENTORY, 3, "production", forced=True)
    failing = {
        "chart_key": "conversions_by_campaign",
        "title": "Conversions by campaign",
        "message": "no such column: campaign_id",
    }
    return [
        Entry(
            forced.at,
            "warning",
            DEPLOYMENT,
            forced.message + " despite failing validation (forced)",
            INVENTORY,
            {**forced.details, "failing_charts": ["stock_on_hand", "stock_trend"]},
        ),
        Entry(
            now - timedelta(days=2),
            "warning",
            DEPLOYMENT,
            "Deployment of dashboard 17 (main, version 5) to production refused: "
            "1 chart(s) failing validation (no such column: campaign_id)",
            FUNNEL,
            {"version_id": 5, "environment": "production", "failing_charts": [failing]},
        ),
    ]


def _migrations(now: datetime) -> list[Entry]:
    pending = [PENDING_MIGRATION, INDEX_MIGRATION]
    entries = [
        Entry(
            now - RENAME_AGO - timedelta(minutes=30),
            "warning",
            DATASOURCES,
            "Upstream schema change on datasource sample: column events.campaign_id "
            "renamed to utm_campaign (events pipeline release)",
            None,
            {"datasource": "sample", "table": "events", "renamed": {"campaign_id": "utm_campaign"}},
        )
    ]
    for day in range(6):
        entries.append(
            Entry(
                now - timedelta(days=day, hours=7),
                "warning",
                DATASOURCES,
                f"Datasource sample has pending migrations not applied: {', '.join(pending)}",
                None,
                {"datasource": "sample", "pending": pending},
            )
        )
    return entries


SLOW_QUERIES = (
    "SELECT o.*, c.* FROM orders o CROSS JOIN customers c",
    "SELECT customer_id, count(*) FROM events GROUP BY customer_id ORDER BY 2 DESC",
    "SELECT * FROM events WHERE payload LIKE '%checkout%'",
)


def _timeout(at: datetime, sql: str, dashboard: int | None, chart: str | None) -> Entry:
    where = f' in chart "{chart}"' if chart else ""
    details: dict[str, Any] = {"datasource": "sample", "timeout_s": 5.0, "sql": sql}
    if chart:
        details["chart"] = chart
    return Entry(
        at,
        "error",
        DATASOURCES,
        f"Query timeout on datasource sample after 5.0 s (statement timeout){where}",
        dashboard,
        details,
    )


def _sql_failures(now: datetime, rng: random.Random) -> list[Entry]:
    """Timeouts of ad-hoc queries and of one dashboard 42 chart; read-only guard refusals."""
    entries = []
    for day in (1, 3, 4, 7, 10, 12):
        at = now - timedelta(days=day, hours=rng.randint(0, 23))
        entries.append(_timeout(at, rng.choice(SLOW_QUERIES), None, None))
    for day in (5, 11):
        at = now - timedelta(days=day, hours=9)
        sql = "SELECT month, sum(amount) FROM orders GROUP BY month"
        entries.append(_timeout(at, sql, SALES, "Revenue by month"))
    for day, statement in ((2, "DELETE FROM orders"), (8, "DROP TABLE customers")):
        entries.append(
            Entry(
                now - timedelta(days=day, hours=3),
                "warning",
                DATASOURCES,
                f"Read-only guard refused a statement: {statement.split()[0]} is not allowed",
                None,
                {"datasource": "sample", "sql": statement, "actor": "editor"},
            )
        )
    return entries


def _routine(now: datetime, rng: random.Random) -> list[Entry]:
    """Daily cache refreshes (debug) and one empty-chart warning."""
    entries = []
    for day in range(DAYS):
        at = now - timedelta(days=day, hours=rng.randint(0, 23))
        rows = rng.randint(10, 900)
        message = f"Refreshed cached results for dashboard 42: {rows} rows"
        details = {"datasource": "sample", "rows": rows}
        entries.append(Entry(at, "debug", DATASOURCES, message, SALES, details))
    entries.append(
        Entry(
            now - timedelta(days=9, hours=2),
            "warning",
            VALIDATION,
            "Dashboard 42 (Sales overview): chart 'Orders by status' returned no rows",
            SALES,
            {"chart": "Orders by status", "chart_key": "orders_by_status", "datasource": "sample"},
        )
    )
    return entries


def demo_history(now: datetime) -> list[Entry]:
    """About three hundred entries over the last two weeks, oldest first; deterministic."""
    rng = random.Random(20261129)  # fixed seed: the demo is reproducible
    entries = [
        *_validations(now, rng),
        *_logins(now, rng),
        *_sales_deployments(now),
        *_incident_deployments(now),
        *_migrations(now),
        *_sql_failures(now, rng),
        *_routine(now, rng),
    ]
    return sorted((e for e in entries if e.at <= now), key=lambda e: e.at)
