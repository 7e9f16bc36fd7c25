"""The fault suite's own stack: a private Postgres cluster (restartable without touching the
machine's shared server), the backend on a fixed port (restartable under the agent's feet),
agent processes that may be SIGKILLed, and checks on what a fault must never leave behind."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import psycopg

from tests.support.processes import ROOT, free_port, stop, wait_http


def postgres_bin() -> Path | None:
    """A directory with initdb and pg_ctl: the system's newest, else the pgserver wheel's."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=_major)
    if found:
        return Path(found[-1]).parent
    if which := shutil.which("initdb"):
        return Path(which).parent
    try:
        import pgserver  # the project's embedded Postgres ships the binaries too
    except ImportError:
        return None
    return Path(pgserver.__file__).parent / "pginstall" / "bin"


def cannot_run_postgres() -> str | None:
    """Why this machine cannot run a private cluster, or None."""
    if postgres_bin() is None:
        return "no PostgreSQL server binaries (initdb, pg_ctl) for a private cluster"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root without a 'postgres' account to own a private cluster"
    return None


def _major(path: str) -> int:
    part = Path(path).parents[1].name
    return int(part) if part.isdigit() else 0


class PrivatePostgres:
    """A throwaway cluster on a free port under a temporary folder (trust, user postgres).

    initdb refuses to run as root, so as root the cluster belongs to the `postgres` account.
    """

    def __init__(self, bin_dir: Path) -> None:
        self.bin = bin_dir
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="agentchat-faults-pg-"))
        self.data = self.root / "data"
        self._as: list[str] = []
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres")
            self._as = ["runuser", "-u", "postgres", "--"]

    def _run(self, *argv: str, timeout: float = 120) -> None:
        subprocess.run(
            [*self._as, *argv], check=True, timeout=timeout, capture_output=True, cwd=self.root
        )

    def start(self) -> PrivatePostgres:
        if not self.data.exists():
            self._run(
                str(self.bin / "initdb"),
                "-D",
                str(self.data),
                "-U",
                "postgres",
                "--auth=trust",
                "--no-sync",
            )
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run(
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.data),
            "-o",
            options,
            "-l",
            "log",
            "-w",
            "start",
        )
        return self

    def restart(self) -> None:
        """Stop (fast: open connections are cut) and start again on the same port."""
        self.halt()
        self.start()

    def halt(self) -> None:
        """Stop the server (fast: open connections are cut); `start()` brings it back."""
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def stop(self) -> None:
        if self.data.exists():
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop")
        shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


class Service:
    """`agent-chat <command> --port P` as a process that a test may stop, kill and start again
    on the same port (so whoever calls it keeps its URL)."""

    def __init__(
        self, argv: Sequence[str], env: Mapping[str, str], *, health_path: str, log_path: Path
    ) -> None:
        self.argv = list(argv)
        self.env = {**os.environ, **env}
        self.health_path = health_path
        self.log_path = log_path
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def spawn(self) -> Service:
        """Start the process without waiting for it (see `ready`)."""
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "agent_chat.cli", *self.argv, "--port", str(self.port)],
                env=self.env,
                cwd=ROOT,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        return self

    def ready(self, timeout: float = 180) -> Service:
        wait_http(self.url + self.health_path, proc=self.proc, timeout=timeout)
        return self

    def start(self) -> Service:
        return self.spawn().ready()

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs, open requests are cut."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is not None:
            stop(self.proc)


def sleeping_queries(warehouse_url: str) -> list[int]:
    """Backend pids of the warehouse sessions now inside pg_sleep (a query's rows are fetched
    through a cursor, so its text is not what pg_stat_activity shows: its wait event is)."""
    with psycopg.connect(warehouse_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND state = 'active' AND wait_event = 'PgSleep'"
        ).fetchall()
    return [int(r[0]) for r in rows]


def wait_until(predicate: Any, *, timeout: float = 20, what: str = "the condition") -> Any:
    """Poll `predicate` until it returns something truthy; that value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := predicate():
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def roles_of(history: list[dict[str, Any]]) -> list[str]:
    """Each history row as 'user', 'decision' or 'assistant'."""
    return [
        "decision" if (h.get("metadata") or {}).get("type") == "decision" else h["role"]
        for h in history
    ]


def audit_count(
    database_url: str, action: str, *, resource_id: str | None = None, **details: str
) -> int:
    """assistant_audit rows of `action` (on `resource_id`) whose details carry these values."""
    where = "" if resource_id is None else " AND resource_id = %s"
    where += "".join(f" AND details->>'{k}' = %s" for k in details)
    params = [action, *([] if resource_id is None else [resource_id]), *details.values()]
    with psycopg.connect(database_url, autocommit=True) as conn:
        row = conn.execute(
            f"SELECT count(*) FROM assistant_audit WHERE action = %s{where}", params
        ).fetchone()
    return int(row[0]) if row else 0
