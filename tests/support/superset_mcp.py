"""Apache Superset 6.1's own MCP service (`superset mcp run`, the `fastmcp` extra) beside a test
Superset: its own cached venv (superset/mcp-venv.sh, from superset/mcp-requirements.lock, which
resolves against the Superset lock's pins), the same metadata database as the instance it
serves, acting as the instance's service account (MCP_DEV_USERNAME: in 6.1 one Superset user
for every caller).

`python -m tests.support.superset_mcp` builds the venv (CI runs it before the suite).
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from sqlalchemy.engine import make_url

from tests.support import superset
from tests.support.processes import ROOT, free_port, stop

VENV_SCRIPT = ROOT / "superset" / "mcp-venv.sh"
MCP_CONFIG = """
MCP_DEV_USERNAME = {user!r}
SUPERSET_WEBSERVER_ADDRESS = {web!r}
MCP_TOOL_SEARCH_CONFIG = {{"enabled": {search!r}}}
"""


def venv() -> Path:
    """The cached venv of Superset's MCP service (created on first use)."""
    out = subprocess.run(
        ["/bin/bash", str(VENV_SCRIPT)], check=True, capture_output=True, text=True, timeout=900
    )
    return Path(out.stdout.strip().splitlines()[-1])


def _wait(url: str, proc: subprocess.Popen[bytes], timeout: float = 180) -> None:
    """Until the service answers HTTP at all (a GET of /mcp is a 4xx: it wants MCP)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"superset mcp run exited with {proc.returncode}")
        try:
            httpx.get(url, timeout=2)
            return
        except httpx.HTTPError:
            time.sleep(0.3)
    raise TimeoutError(f"{url} did not answer within {timeout}s")


@contextmanager
def serve(
    instance: superset.Instance, venv_dir: Path, work: Path, *, tool_search: bool
) -> Iterator[str]:
    """`superset mcp run` on a free port for `instance`; yields its Streamable HTTP URL."""
    meta = make_url(instance.metadata_url)
    uri = meta.set(drivername="postgresql+psycopg2").render_as_string(hide_password=False)
    config = superset.write_config(work, uri)
    with config.open("a") as out:
        out.write(MCP_CONFIG.format(user=superset.ADMIN_USER, web=instance.url, search=tool_search))
    port = free_port()
    log = work / "mcp.log"
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [str(venv_dir / "bin" / "superset"), "mcp", "run", "--port", str(port)],
            env=superset._env(config),
            cwd=work,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        _wait(url, proc)
        yield url
    finally:
        stop(proc)


if __name__ == "__main__":
    print(f"superset mcp: venv {venv()}")
    sys.exit(0)
