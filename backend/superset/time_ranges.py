"""Superset's time range syntax, checked here where the Superset will not parse it for the
platform (its `/api/v1/time_range/` answers "Access is Denied" to an API token on 6.1, and its
chart data API runs an unparseable range silently, with every row).

Conservative: the named ranges Superset's own picker offers, and `<since> : <until>` whose
sides are dates, `now` / `today` / ..., `N units ago|before|after|later`, or one of Superset's
date functions (`DATEADD(...)`, `DATETIME(...)`, `DATETRUNC(...)`, `LASTDAY(...)`,
`HOLIDAY(...)`), which Superset then evaluates when the chart runs on staging.
"""

from __future__ import annotations

import re
from datetime import datetime

NO_FILTER = "no filter"
UNITS = r"(second|minute|hour|day|week|month|quarter|year)s?"
NAMED = re.compile(
    rf"^(no filter|(last|current) {UNITS}|previous calendar {UNITS}|last \d+ {UNITS})$", re.I
)
RELATIVE = re.compile(rf"^(now|today|yesterday|tomorrow|\d+ {UNITS} (ago|before|after|later))$")
FUNCTION = re.compile(r"^(dateadd|datetime|datetrunc|lastday|holiday)\(.*\)$", re.I | re.S)


def _side(text: str) -> bool:
    value = text.strip()
    if not value or RELATIVE.match(value.lower()):
        return True
    if FUNCTION.match(value):
        return value.count("(") == value.count(")")
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def parses(value: str) -> bool:
    """True when `value` is a time range Superset's syntax allows (as far as checked here)."""
    text = value.strip()
    if NAMED.match(text):
        return True
    since, colon, until = text.partition(" : ")
    return bool(colon) and _side(since) and _side(until)
