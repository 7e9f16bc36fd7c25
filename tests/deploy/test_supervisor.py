"""The supervisor of `agent-chat up` (agent_chat/supervisor.py) on real short-lived processes:
a child that exits is started again after a backoff that doubles while it keeps dying, the
others are left alone, and a child that ran long enough starts over at the first delay."""

from __future__ import annotations

import subprocess
import sys

from agent_chat.supervisor import Backoff, Child, Supervisor


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _python(code: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", code])


def test_a_dying_child_is_restarted_with_a_growing_backoff_and_the_others_are_left_alone():
    clock = Clock()
    dying = Child("dying", lambda: _python("raise SystemExit(3)"))
    steady = Child("steady", lambda: _python("import time; time.sleep(60)"))
    supervisor = Supervisor(
        [dying, steady], backoff=Backoff(first_s=1, max_s=4, stable_s=30), clock=clock
    )
    for child in (dying, steady):
        child.spawn(clock.now)
    steady_pid = steady.proc.pid
    try:
        starts = []
        for _ in range(4):
            assert dying.proc is not None
            dying.proc.wait(timeout=30)
            supervisor.step()  # the exit is seen: a start is due after the backoff
            assert dying.due_at is not None
            starts.append(dying.due_at - clock.now)
            clock.now = dying.due_at
            supervisor.step()  # due: started again
            assert dying.due_at is None
        assert starts == [1, 2, 4, 4]  # doubling, capped at max_s
        assert dying.restarts == 4
        assert steady.proc.pid == steady_pid and steady.proc.poll() is None
        assert steady.restarts == 0

        # A child that ran past stable_s before dying waits the first delay again.
        dying.proc.wait(timeout=30)
        clock.now += 31
        supervisor.step()
        assert dying.due_at == clock.now + 1
    finally:
        for child in (dying, steady):
            if child.proc is not None and child.proc.poll() is None:
                child.proc.kill()
                child.proc.wait()
