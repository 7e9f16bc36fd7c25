"""procrastinate's retry for deliveries: wait the configured delays between attempts (the row's
own attempt count decides when to stop, backend/schedules/deliveries.py)."""

from __future__ import annotations

from procrastinate.jobs import Job
from procrastinate.retry import BaseRetryStrategy, RetryDecision


class Backoff(BaseRetryStrategy):
    def __init__(self, delays_s: list[float]) -> None:
        self.delays_s = delays_s or [1.0]

    def get_retry_decision(self, *, exception: BaseException, job: Job) -> RetryDecision | None:
        del exception
        index = min(job.attempts, len(self.delays_s) - 1)
        return RetryDecision(retry_in={"seconds": max(1, round(self.delays_s[index]))})
