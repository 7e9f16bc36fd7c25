"""The checks a schedule's fields pass, at creation and after every change (422 otherwise)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from backend.config import SchedulesSettings
from backend.errors import Unprocessable
from backend.schedules import targets, timing
from backend.schedules.models import Schedule


@dataclass(frozen=True)
class Rules:
    """What a schedule is checked against: the settings and the loaded workflows' names."""

    settings: SchedulesSettings
    workflows: Collection[str]

    def check(self, row: Schedule) -> None:
        """Raise Unprocessable naming the first rule `row` breaks."""
        if (row.cron is None) == (row.every_s is None):
            raise Unprocessable("Give exactly one of cron and every_s", details={"field": "cron"})
        kinds = [k for k in ("prompt", "workflow", "sweep") if getattr(row, k) is not None]
        if len(kinds) != 1:
            raise Unprocessable(
                "Give exactly one of prompt, workflow and sweep", details={"field": "prompt"}
            )
        self._timing(row)
        if row.workflow is not None and row.workflow not in self.workflows:
            raise Unprocessable("Unknown workflow", details={"field": "workflow"})
        webhook = (row.notify or {}).get("webhook")
        if webhook is not None:
            try:
                targets.check_webhook(webhook, self.settings.allowed_hosts)
            except targets.TargetError as exc:
                raise Unprocessable(str(exc), details={"field": "notify.webhook"}) from exc

    def _timing(self, row: Schedule) -> None:
        try:
            timing.zone(row.timezone)
            if row.cron is not None:
                timing.check_cron(row.cron)
        except timing.TimingError as exc:
            field = "cron" if "cron" in str(exc) else "timezone"
            raise Unprocessable(str(exc), details={"field": field}) from exc
        if row.every_s is not None and row.every_s < self.settings.min_interval_s:
            raise Unprocessable(
                f"every_s must be at least {self.settings.min_interval_s}",
                details={"field": "every_s"},
            )


def timing_of(row: Schedule) -> timing.Timing:
    return timing.Timing(row.cron, row.every_s, row.timezone, row.created_at)
