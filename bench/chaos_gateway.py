"""What the chaos soak's people got from the gateway (bench/chaos.py), request by request, and
the eighth invariant (CONTRACT.md, "Failover through the gateway"): no request is answered by
the gateway's own 502/503/504, nor fails to connect, while a replica of each kind is alive.

Each person's HTTP client sends through `Counting`, which counts every answer and keeps each
gateway failure with its start and end; the soak keeps each replica's outage (from its SIGKILL
until it answers /readyz again), and `violations` excuses only a failure that overlaps a moment
when every replica of a kind was down.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import httpx

GATEWAY_STATUSES = frozenset({502, 503, 504})
# A connection the gateway refused, reset or closed before an answer; a timeout is counted
# apart (a slow answer on a loaded machine is not a failover's failure).
CONNECTION_ERRORS = (httpx.NetworkError, httpx.RemoteProtocolError)


@dataclass(frozen=True)
class Failure:
    """One request the gateway failed: what, how, when (epoch seconds)."""

    method: str
    path: str
    what: str  # the status, or the exception's name
    started: float
    ended: float


@dataclass
class Tally:
    """Every answer by status (or exception name), and the gateway failures; thread-safe."""

    answers: Counter[str] = field(default_factory=Counter)
    failures: list[Failure] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, what: str, failure: Failure | None) -> None:
        with self.lock:
            self.answers[what] += 1
            if failure is not None:
                self.failures.append(failure)


def gateway_failed(response: httpx.Response) -> bool:
    """nginx's own error page, not a replica's answer (whose errors are JSON envelopes)."""
    kind = response.headers.get("content-type", "")
    return response.status_code in GATEWAY_STATUSES and not kind.startswith("application/json")


class Counting(httpx.HTTPTransport):
    """An HTTP transport that counts every answer into `tally` (the answer's head: a stream cut
    later, after its 200, is the turn's to see)."""

    def __init__(self, tally: Tally) -> None:
        super().__init__()
        self.tally = tally

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        started = time.time()
        try:
            response = super().handle_request(request)
        except httpx.TransportError as exc:
            failed = isinstance(exc, CONNECTION_ERRORS)
            self.tally.add(type(exc).__name__, self._failure(request, exc, started, failed))
            raise
        failed = gateway_failed(response)
        status = str(response.status_code)
        self.tally.add(status, self._failure(request, status, started, failed))
        return response

    @staticmethod
    def _failure(
        request: httpx.Request, what: object, started: float, failed: bool
    ) -> Failure | None:
        if not failed:
            return None
        name = what if isinstance(what, str) else type(what).__name__
        return Failure(request.method, request.url.path, name, started, time.time())


@dataclass
class Outage:
    """One replica down: from its SIGKILL until its /readyz answers (`until` None: not yet)."""

    kind: str  # backend, agent
    name: str
    since: float
    until: float | None = None


def all_down(outages: Iterable[Outage], replicas: dict[str, int]) -> list[tuple[float, float]]:
    """The spans when every replica of some kind was down (`replicas`: how many of each)."""
    spans: list[tuple[float, float]] = []
    for kind, count in replicas.items():
        mine = [o for o in outages if o.kind == kind]
        edges = sorted([(o.since, 1) for o in mine] + [(o.until or float("inf"), -1) for o in mine])
        down, since = 0, 0.0
        for at, step in edges:
            if step == 1 and down + 1 == count:
                since = at
            elif step == -1 and down == count:
                spans.append((since, at))
            down += step
    return spans


def violations(
    failures: Iterable[Failure], outages: Iterable[Outage], replicas: dict[str, int]
) -> list[str]:
    """A line for each gateway failure while a replica of each kind was alive."""
    spans = all_down(outages, replicas)
    found = []
    for f in sorted(failures, key=lambda f: f.started):
        if not any(f.started <= end and start <= f.ended for start, end in spans):
            at = time.strftime("%H:%M:%S", time.localtime(f.started))
            found.append(f"{at} {f.method} {f.path}: {f.what} ({f.ended - f.started:.1f} s)")
    return found
