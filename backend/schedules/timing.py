"""When a schedule fires: 5-field cron in an IANA time zone, or a fixed interval; the grace
rule for firings missed while nothing ran (CONTRACT.md "Schedules")."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import CroniterError, croniter

# A catch-up looks back at most this many due times (an every_s of 300 down for a year stops here).
MAX_MISSED = 10_000


class TimingError(ValueError):
    """A cron expression or time zone that cannot be used; the message says which."""


def zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise TimingError(f"Unknown time zone {name!r}") from exc


def check_cron(expression: str) -> None:
    """Five fields (minute hour day month weekday) that croniter accepts and that ever fire
    (`0 0 31 2 *` never does), or TimingError."""
    if len(expression.split()) != 5 or not croniter.is_valid(expression):
        raise TimingError("cron must be five fields: minute hour day-of-month month day-of-week")
    try:
        croniter(expression, datetime.now(UTC)).get_next(datetime)
    except CroniterError as exc:
        raise TimingError("cron never fires (no such date)") from exc


@dataclass(frozen=True)
class Timing:
    """One of `cron` (in `timezone`) and `every_s`; `anchor` starts the interval sequence."""

    cron: str | None
    every_s: int | None
    timezone: str
    anchor: datetime

    def next_after(self, moment: datetime) -> datetime:
        """The first due time strictly after `moment` (UTC)."""
        if self.cron is not None:
            local = moment.astimezone(zone(self.timezone))
            found: datetime = croniter(self.cron, local).get_next(datetime)
            return found.astimezone(UTC)
        assert self.every_s is not None
        step = timedelta(seconds=self.every_s)
        if moment < self.anchor:
            return self.anchor
        periods = int((moment - self.anchor) / step) + 1
        return self.anchor + periods * step

    def upcoming(self, moment: datetime, count: int) -> list[datetime]:
        found: list[datetime] = []
        for _ in range(count):
            moment = self.next_after(moment)
            found.append(moment)
        return found

    def last_due(self, first_due: datetime, now: datetime) -> datetime:
        """The latest due time in [first_due, now] (first_due itself when none is later)."""
        last = first_due
        for _ in range(MAX_MISSED):
            following = self.next_after(last)
            if following > now:
                return last
            last = following
        return last


@dataclass(frozen=True)
class Claim:
    """What a due schedule does now: run once for `due_at` (or record it `skipped`), then wait
    for `next_run_at`."""

    due_at: datetime
    run: bool
    next_run_at: datetime


def claim(timing: Timing, *, first_due: datetime, now: datetime, grace_s: int) -> Claim:
    """The grace rule: missed due times become one run when the last is less than `grace_s`
    late, otherwise one `skipped` record."""
    last = timing.last_due(first_due, now)
    late = (now - last).total_seconds()
    return Claim(due_at=last, run=late < grace_s, next_run_at=timing.next_after(now))


def now() -> datetime:
    return datetime.now(UTC)
