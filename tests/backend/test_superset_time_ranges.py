"""The platform's own check of Superset's time range syntax (Superset 6.1 runs an unparseable
range silently and will not parse one for an API token)."""

from __future__ import annotations

import pytest

from backend.superset.time_ranges import parses


@pytest.mark.parametrize(
    "value",
    [
        "No filter",
        "Last week",
        "last year",
        "Current month",
        "previous calendar week",
        "2026-01-01 : 2026-02-01",
        "2026-01-01T00:00:00 : now",
        "7 days ago : today",
        'DATEADD(DATETIME("today"), -7, day) : today',
    ],
)
def test_superset_time_ranges_are_accepted(value: str) -> None:
    assert parses(value)


@pytest.mark.parametrize(
    "value", ["next blue moon", "blue : moon", "Last fortnight", "2026-13-01 : now", "DATEADD("]
)
def test_what_superset_cannot_parse_is_refused(value: str) -> None:
    assert not parses(value)
