"""The real nginx gateway for tests: render nginx/default.conf.template with local ports and
paths, and run nginx in the foreground under a temporary prefix."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from tests.support.processes import ROOT, free_port, stop, wait_http

TEMPLATE = ROOT / "nginx" / "default.conf.template"
PLACEHOLDER = re.compile(r"\$\{([A-Z][A-Z0-9_]*)\}")
MIME_TYPES = Path("/etc/nginx/mime.types")

MAIN_CONF = """\
worker_processes 1;
daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 512; }}
http {{
    include {mime_types};
    default_type application/octet-stream;
    access_log {prefix}/access.log;
    sendfile on;
    client_body_temp_path {prefix}/client_body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    include {prefix}/agent-chat.conf;
}}
"""


def placeholders(template: str) -> set[str]:
    """The ${NAME} placeholders of a template (nginx's own $variables are not among them)."""
    return set(PLACEHOLDER.findall(template))


def render(template: str, values: Mapping[str, str]) -> str:
    """Fill every ${NAME}; a placeholder without a value is an error, as it would be in prod."""
    missing = placeholders(template) - set(values)
    if missing:
        raise KeyError(f"no value for {sorted(missing)}")
    return PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def nginx_binary() -> str | None:
    return shutil.which("nginx") or next(
        (p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if Path(p).exists()), None
    )


def write_config(prefix: Path, values: Mapping[str, str]) -> Path:
    """Write the main config and the rendered server config under `prefix`; return the main."""
    prefix.mkdir(parents=True, exist_ok=True)
    (prefix / "agent-chat.conf").write_text(render(TEMPLATE.read_text(), values))
    main = prefix / "nginx.conf"
    main.write_text(MAIN_CONF.format(prefix=prefix, mime_types=MIME_TYPES))
    return main


@contextmanager
def run_gateway(prefix: Path, *, backend: str, agent: str, static_root: Path) -> Iterator[str]:
    """nginx before `backend` and `agent` (host:port), serving `static_root`; yields its URL."""
    binary = nginx_binary()
    if binary is None:
        raise FileNotFoundError("nginx is not installed")
    port = free_port()
    values = {
        "LISTEN": f"127.0.0.1:{port}",
        "BACKEND_UPSTREAM": backend,
        "AGENT_UPSTREAM": agent,
        "STATIC_ROOT": str(static_root),
    }
    main = write_config(prefix, values)
    command = [binary, "-p", str(prefix), "-c", str(main), "-e", str(prefix / "error.log")]
    subprocess.run([*command, "-t", "-q"], check=True, capture_output=True)
    with (prefix / "stdout.log").open("ab") as log:
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_http(url + "/", timeout=20, proc=proc)
        yield url
    finally:
        stop(proc)
