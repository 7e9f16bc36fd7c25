"""Real Apache Superset instances for tests: a cached virtual environment (superset/venv.sh),
a Postgres metadata template initialised once per lock file, and gunicorn processes on free
ports, each on its own copy of the template (CREATE DATABASE ... TEMPLATE: 0.1 s, not 30 s).

`python -m tests.support.superset` prepares the venv and the template (CI runs it before the
suite; fast when both are cached).
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg
from sqlalchemy.engine import make_url

from tests.support import db
from tests.support.processes import ROOT, free_port, stop, wait_http

LOCK = ROOT / "superset" / "requirements.lock"
VENV_SCRIPT = ROOT / "superset" / "venv.sh"
# The service account baked into the template. A test value, and a distinctive one: the
# black-box tests look for it in every answer, log and audit row.
ADMIN_USER = "svc_agentchat"
ADMIN_PASSWORD = "Sup3rset-svc-Pw-7f3a91c2"
SECRET_KEY = "agent-chat-tests-superset-secret-key-0123456789"
CONFIG = """\
SECRET_KEY = {secret!r}
SQLALCHEMY_DATABASE_URI = {uri!r}
TALISMAN_ENABLED = False
RATELIMIT_ENABLED = False
AUTH_RATE_LIMITED = False
WTF_CSRF_ENABLED = True
SUPERSET_WEBSERVER_TIMEOUT = 60
FEATURE_FLAGS = {{"DASHBOARD_RBAC": False}}
"""


def key() -> str:
    """What the venv and the template are cached by: the lock file and this module's setup."""
    digest = hashlib.sha256(LOCK.read_bytes())
    digest.update(f"{ADMIN_USER}:{ADMIN_PASSWORD}:{SECRET_KEY}:{CONFIG}".encode())
    return digest.hexdigest()[:12]


def template_name() -> str:
    return f"superset_tpl_{key()}"


def venv() -> Path:
    """The cached Superset venv (created on first use)."""
    out = subprocess.run(
        ["/bin/bash", str(VENV_SCRIPT)], check=True, capture_output=True, text=True, timeout=600
    )
    return Path(out.stdout.strip().splitlines()[-1])


def _url(admin_url: str, database: str) -> str:
    return make_url(admin_url).set(database=database).render_as_string(hide_password=False)


def _sqlalchemy_url(admin_url: str, database: str) -> str:
    """The URL in psycopg2's dialect, as Superset (SQLAlchemy 1.4) wants it."""
    return (
        make_url(admin_url)
        .set(drivername="postgresql+psycopg2", database=database)
        .render_as_string(hide_password=False)
    )


def write_config(directory: Path, metadata_uri: str, extra: str = "") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "superset_config.py"
    path.write_text(CONFIG.format(secret=SECRET_KEY, uri=metadata_uri) + extra)
    return path


def _env(config: Path, pythonpath: str | None = None) -> dict[str, str]:
    return {
        **os.environ,
        **({"PYTHONPATH": pythonpath} if pythonpath else {}),
        "SUPERSET_CONFIG_PATH": str(config),
        "FLASK_APP": "superset.app:create_app()",
        "PYTHONUNBUFFERED": "1",
    }


def _exists(conn: psycopg.Connection, name: str) -> bool:
    return (
        conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is not None
    )


def _initialise(admin_url: str, venv_dir: Path, database: str, work: Path) -> None:
    config = write_config(work, _sqlalchemy_url(admin_url, database))
    superset = str(venv_dir / "bin" / "superset")
    env = _env(config)
    steps = [
        [superset, "db", "upgrade"],
        [
            superset,
            "fab",
            "create-admin",
            "--username",
            ADMIN_USER,
            "--firstname",
            "Agent",
            "--lastname",
            "Chat",
            "--email",
            "svc@agent-chat.invalid",
            "--password",
            ADMIN_PASSWORD,
        ],
        [superset, "init"],
    ]
    log = work / "init.log"
    with log.open("ab") as out:
        for argv in steps:
            done = subprocess.run(argv, env=env, stdout=out, stderr=subprocess.STDOUT, timeout=600)
            if done.returncode != 0:
                raise RuntimeError(f"{' '.join(argv[1:3])} failed; see {log}")
    with psycopg.connect(_url(admin_url, database), autocommit=True) as conn:
        conn.execute("ANALYZE")  # the API's list queries are 10x slower without statistics


def template(admin_url: str, venv_dir: Path, work: Path) -> str:
    """The initialised metadata template's name, built once per key() on this server."""
    name = template_name()
    with psycopg.connect(admin_url, autocommit=True) as conn:
        # One builder at a time across test workers and CI steps.
        conn.execute("SELECT pg_advisory_lock(hashtext(%s))", (name,))
        try:
            if not _exists(conn, name):
                building = f"{name}_build"
                conn.execute(f'DROP DATABASE IF EXISTS "{building}" WITH (FORCE)')
                conn.execute(f'CREATE DATABASE "{building}"')
                _initialise(admin_url, venv_dir, building, work)
                conn.execute(f'ALTER DATABASE "{building}" RENAME TO "{name}"')
        finally:
            conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", (name,))
    return name


def copy_template(admin_url: str, template: str) -> str:
    """A fresh metadata database for one instance; returns its libpq URL."""
    name = f"superset_meta_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    return _url(admin_url, name)


@dataclass(frozen=True)
class Instance:
    name: str
    url: str
    metadata_url: str
    log: Path
    proc: subprocess.Popen[bytes]

    def wait(self, timeout: float = 180) -> None:
        """Until its /health answers (fails early when the process exits)."""
        wait_http(self.url + "/health", proc=self.proc, timeout=timeout)


@contextmanager
def serve(
    admin_url: str,
    venv_dir: Path,
    template: str,
    work: Path,
    names: tuple[str, ...],
    *,
    wait: bool = True,
    extra_config: str = "",
    pythonpath: str | None = None,
) -> Iterator[dict[str, Instance]]:
    """Start one gunicorn Superset per name (in parallel), each on a copy of the template;
    `wait=False` yields them still booting (each `Instance.wait()` before use); `extra_config`
    is appended to each one's superset_config.py, `pythonpath` put on its PYTHONPATH."""
    procs: list[subprocess.Popen[bytes]] = []
    instances: dict[str, Instance] = {}
    try:
        for name in names:
            metadata = copy_template(admin_url, template)
            meta_db = make_url(metadata).database or ""
            config = write_config(work / name, _sqlalchemy_url(admin_url, meta_db), extra_config)
            port = free_port()
            log = work / name / "superset.log"
            with log.open("ab") as out:
                procs.append(
                    subprocess.Popen(
                        [
                            str(venv_dir / "bin" / "gunicorn"),
                            "-w",
                            "1",
                            "--threads",
                            "8",
                            "-k",
                            "gthread",
                            "--graceful-timeout",  # its 30 s default made every session end slow
                            "2",
                            "--timeout",
                            "120",
                            "-b",
                            f"127.0.0.1:{port}",
                            "superset.app:create_app()",
                        ],
                        env=_env(config, pythonpath),
                        cwd=work / name,
                        stdout=out,
                        stderr=subprocess.STDOUT,
                    )
                )
            instances[name] = Instance(name, f"http://127.0.0.1:{port}", metadata, log, procs[-1])
        for instance in instances.values() if wait else ():
            instance.wait()
        yield instances
    finally:
        for proc in procs:  # both at once (SIGINT: gunicorn's quick shutdown), then wait
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        for proc in procs:
            stop(proc)
        for instance in instances.values():
            db.drop_database(admin_url, instance.metadata_url)


def prepare() -> tuple[Path, str]:
    """Venv and template, ready (CI's step before the suite)."""
    started = time.monotonic()
    venv_dir = venv()
    work = ROOT / ".data" / "superset-template"
    name = template(db.server_url(), venv_dir, work)
    print(f"superset: venv {venv_dir}, template {name} ({time.monotonic() - started:.1f}s)")
    return venv_dir, name


if __name__ == "__main__":
    prepare()
    sys.exit(0)
