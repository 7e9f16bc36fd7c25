"""dashboards tables."""
