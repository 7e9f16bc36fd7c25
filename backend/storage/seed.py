"""Demo data for storage: CSV exports, JSON configs, a README, a runbook and one small PNG."""

from __future__ import annotations

import json
import logging
import random
import struct
import zlib
from datetime import date, timedelta

import obstore.exceptions
from sqlalchemy.ext.asyncio import AsyncSession

from backend.config import Settings
from backend.storage.store import ObjectStorage, StorageConfigError, build

log = logging.getLogger("backend.storage.seed")

REGIONS = ("north", "south", "east", "west")
PRODUCTS = {"Desk lamp": 39.0, "Office chair": 189.0, "Monitor 27in": 279.0, "Keyboard": 59.0}
CAMPAIGNS = ("autumn_sale", "newsletter_11", "brand_search", "retargeting")

README = """# Demo object store

Files the assistant can list and read (text only; binary files are refused):

- `exports/` monthly CSV exports of orders and the marketing funnel
- `configs/` dashboard settings as JSON
- `runbooks/` plain-text operational notes
- `images/logo.png` a binary file, to show that reading it is refused
"""

ON_CALL = """On-call checklist (BI platform)

1. Check failing dashboards first: dashboard_health for each one marked failing.
2. Read the operational logs for the dashboard (query_logs with dashboard_id) to see when
   the failure started and what changed just before (migrations, deployments).
3. Missing column after a schema change: fix the chart on a branch, commit, validate, deploy.
4. Missing table: look for a pending datasource migration; an admin applies it.
5. Query timeouts: add filters or an index; do not just raise the timeout.
6. Write down what you changed in the incident channel.
"""


def _sales_csv(year: int, month: int) -> bytes:
    rng = random.Random(year * 100 + month)  # same file on every run
    lines = ["order_id,order_date,region,product,quantity,unit_price,amount"]
    start = date(year, month, 1)
    for n in range(1, 61):
        day = start + timedelta(days=rng.randrange(28))
        product, price = rng.choice(sorted(PRODUCTS.items()))
        quantity = rng.randint(1, 5)
        lines.append(
            f"{year}{month:02d}{n:04d},{day.isoformat()},{rng.choice(REGIONS)},"
            f"{product},{quantity},{price:.2f},{quantity * price:.2f}"
        )
    return ("\n".join(lines) + "\n").encode()


def _funnel_csv() -> bytes:
    rng = random.Random(17)
    lines = ["date,utm_campaign,sessions,signups,orders"]
    for day in range(1, 29):
        for campaign in CAMPAIGNS:
            sessions = rng.randint(200, 2000)
            signups = sessions * rng.randint(3, 9) // 100
            orders = signups * rng.randint(10, 40) // 100
            lines.append(f"2026-11-{day:02d},{campaign},{sessions},{signups},{orders}")
    return ("\n".join(lines) + "\n").encode()


def _json(value: object) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode()


def _png() -> bytes:
    """A valid 2x2 grey PNG, built by hand (no imaging library at runtime)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 2, 2, 8, 0, 0, 0, 0)  # 2x2, 8-bit greyscale
    pixels = zlib.compress(b"\x00\x80\x80\x00\x80\x80")  # two rows: filter byte + 2 pixels
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def demo_files() -> dict[str, bytes]:
    return {
        "README.md": README.encode(),
        "exports/sales_2026_10.csv": _sales_csv(2026, 10),
        "exports/sales_2026_11.csv": _sales_csv(2026, 11),
        "exports/marketing_funnel_2026_11.csv": _funnel_csv(),
        "configs/dashboard_42.json": _json(
            {
                "dashboard_id": 42,
                "title": "Sales overview",
                "refresh": "hourly",
                "owners": ["admin"],
                "alerts": {"revenue_drop_pct": 20, "notify": ["#bi-alerts"]},
            }
        ),
        "configs/dashboard_17.json": _json(
            {
                "dashboard_id": 17,
                "title": "Marketing funnel",
                "refresh": "daily",
                "owners": ["editor"],
                "notes": "events.campaign_id was renamed to utm_campaign "
                "(migration 20261126_events_utm_rename)",
            }
        ),
        "runbooks/on-call.txt": ON_CALL.encode(),
        "images/logo.png": _png(),
    }


async def put_missing(*, storage: ObjectStorage) -> list[str]:
    """Write each demo file that is absent (existing files are left as they are)."""
    written = []
    for key, data in demo_files().items():
        try:
            await storage.head(key)
        except (FileNotFoundError, obstore.exceptions.NotFoundError):
            await storage.put(key, data)
            written.append(key)
    return written


async def seed(*, session: AsyncSession, settings: Settings) -> None:
    """Idempotent: safe to run on every start. An unreachable store is logged, not fatal:
    the other domains' demo data must still be seeded."""
    try:
        written = await put_missing(storage=build(settings.storage))
    except (OSError, obstore.exceptions.BaseError, StorageConfigError) as exc:
        log.warning("demo files not written to %s: %s", settings.storage.url, exc)
        return
    if written:
        log.info("demo files written: %s", ", ".join(written))
