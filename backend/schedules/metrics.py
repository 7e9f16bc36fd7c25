"""Prometheus counters of firings and deliveries (served at the backend's /metrics)."""

from __future__ import annotations

from prometheus_client import Counter

FIRINGS = Counter(
    "schedule_firings_total", "Schedule firings by kind and how they ended", ["kind", "status"]
)
DELIVERIES = Counter(
    "schedule_deliveries_total",
    "Delivery attempts of schedule runs by channel and result",
    ["channel", "result"],
)
