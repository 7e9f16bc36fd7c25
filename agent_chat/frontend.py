"""The browser client for `agent-chat up`: build frontend/ when its sources changed, then serve
the build with Vite's preview server, which proxies /api/agent/gradio to the agent and /api to
the backend as the nginx gateway does in production."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

FRONTEND = Path(__file__).resolve().parent.parent / "frontend"
DIST = FRONTEND / "dist"
SOURCES = ("src", "public", "index.html", "package-lock.json", "vite.config.ts", "svelte.config.js")


class FrontendError(RuntimeError):
    """The client cannot be built here (no Node.js, or the build failed)."""


def _newest(path: Path) -> float:
    if path.is_file():
        return path.stat().st_mtime
    return max((p.stat().st_mtime for p in path.rglob("*") if p.is_file()), default=0.0)


def is_stale() -> bool:
    """True when dist/ is missing or older than any source of the build."""
    built = DIST / "index.html"
    if not built.exists():
        return True
    stamp = built.stat().st_mtime
    return any(_newest(FRONTEND / name) > stamp for name in SOURCES if (FRONTEND / name).exists())


def _npm(*args: str) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise FrontendError("Node.js 20 with npm is needed to build the browser client")
    result = subprocess.run([npm, *args], cwd=FRONTEND, check=False)
    if result.returncode != 0:
        raise FrontendError(f"`npm {' '.join(args)}` failed in {FRONTEND}")


def ensure_built() -> Path:
    """Install the locked packages if needed and build when stale; return dist/."""
    installed = FRONTEND / "node_modules" / ".package-lock.json"
    lock = FRONTEND / "package-lock.json"
    if not installed.exists() or lock.stat().st_mtime > installed.stat().st_mtime:
        _npm("ci", "--no-audit", "--no-fund")
    if is_stale():
        _npm("run", "build")
    return DIST


def serve(
    *, host: str, port: int, backend_url: str, agent_url: str, env: Mapping[str, str]
) -> subprocess.Popen[bytes]:
    """Start `vite preview` on host:port in front of the backend and the agent."""
    node = shutil.which("node")
    if node is None:
        raise FrontendError("Node.js 20 is needed to serve the browser client")
    vite = FRONTEND / "node_modules" / "vite" / "bin" / "vite.js"
    command = [node, str(vite), "preview", "--host", host, "--port", str(port), "--strictPort"]
    child_env = {**os.environ, **env, "BACKEND_URL": backend_url, "AGENT_URL": agent_url}
    return subprocess.Popen(command, cwd=FRONTEND, env=child_env)
