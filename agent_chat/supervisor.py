"""The children of `agent-chat up`, kept running: one that exits is started again after a
backoff (logged), and the others go on serving meanwhile (the gateway skips a dead replica).

The backoff doubles from `first_s` to `max_s` for a child that keeps dying, and starts over
once the child has run for `stable_s`: a backend killed once is back within a second or two,
one that cannot start (a port taken, a broken config) is retried without spinning the CPU.
Ctrl-C (SIGINT) or SIGTERM stops every child and ends the loop.
"""

from __future__ import annotations

import logging
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

log = logging.getLogger("agent-chat")

Start = Callable[[], "subprocess.Popen[bytes]"]


@dataclass
class Backoff:
    """Seconds to wait before the next start of a child that exited."""

    first_s: float = 0.5
    max_s: float = 30.0
    stable_s: float = 60.0  # a child that ran this long starts over at first_s

    def delay(self, failures: int) -> float:
        return min(self.first_s * 2 ** max(failures - 1, 0), self.max_s)


@dataclass
class Child:
    """One supervised process: its name in the logs, how to start it, and its current process."""

    name: str
    start: Start
    proc: subprocess.Popen[bytes] | None = None
    restarts: int = 0
    failures: int = 0  # exits in a row, each after less than Backoff.stable_s
    started_at: float = 0.0
    due_at: float | None = None  # when the next start is due (the child is down)

    def spawn(self, now: float) -> subprocess.Popen[bytes]:
        self.proc = self.start()
        self.started_at = now
        self.due_at = None
        return self.proc

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


class Supervisor:
    """Watch children, restart each that exits, stop them all on a signal."""

    def __init__(
        self,
        children: Sequence[Child],
        *,
        backoff: Backoff | None = None,
        poll_s: float = 0.2,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.children = list(children)
        self.backoff = backoff or Backoff()
        self.poll_s = poll_s
        self.clock = clock
        self.stopping = False

    def step(self) -> None:
        """One look at every child: note those that exited, start those whose backoff is over."""
        now = self.clock()
        for child in self.children:
            if child.due_at is None and not child.alive():
                code = child.proc.returncode if child.proc is not None else None
                ran = now - child.started_at
                child.failures = 1 if ran >= self.backoff.stable_s else child.failures + 1
                wait = self.backoff.delay(child.failures)
                child.due_at = now + wait
                log.warning(
                    "%s exited with %s after %.1fs; restarting in %.1fs",
                    child.name,
                    code,
                    ran,
                    wait,
                )
            if child.due_at is not None and now >= child.due_at:
                try:
                    child.spawn(now)
                except (OSError, RuntimeError) as exc:  # no binary, nginx refused its config...
                    child.failures += 1
                    child.due_at = now + self.backoff.delay(child.failures)
                    log.error("%s could not be started again: %s", child.name, exc)
                    continue
                child.restarts += 1
                log.warning("%s restarted (restart %d)", child.name, child.restarts)

    def run(self) -> int:
        """Supervise until SIGINT/SIGTERM; then stop every child. 0 (a requested stop)."""

        def on_signal(signum: int, frame: object) -> None:
            self.stopping = True

        signal.signal(signal.SIGINT, on_signal)
        signal.signal(signal.SIGTERM, on_signal)
        try:
            while not self.stopping:
                self.step()
                time.sleep(self.poll_s)
        finally:
            stop([c.proc for c in self.children if c.proc is not None])
        return 0


def stop(procs: Sequence[subprocess.Popen[bytes]], *, grace_s: float = 10) -> None:
    """SIGTERM every process still running, then SIGKILL whichever outlives `grace_s`."""
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
