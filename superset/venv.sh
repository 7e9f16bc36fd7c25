#!/usr/bin/env bash
# Create (once) the virtual environment the tests' Superset instances run in, outside the clone,
# keyed by the lock file's hash, and print its path. Fast when cached: the venv is reused as is.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
lock="$here/requirements.lock"
uv="${UV:-$(command -v uv || echo "$HOME/.local/bin/uv")}"
hash="$(sha256sum "$lock" | cut -c1-12)"
cache="${AGENT_CHAT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-chat}"
venv="$cache/superset-$hash"
if [ ! -x "$venv/bin/superset" ] || [ ! -f "$venv/.complete" ]; then
    mkdir -p "$cache"
    tmp="$(mktemp -d "$cache/superset-$hash.tmp.XXXXXX")"
    "$uv" venv --quiet --relocatable --python 3.11 "$tmp" >&2
    VIRTUAL_ENV="$tmp" "$uv" pip sync --quiet --compile-bytecode --python "$tmp/bin/python" "$lock" >&2
    touch "$tmp/.complete" "$tmp/.bytecode"
    # Another run may have finished first: keep its venv, drop ours.
    mv -T "$tmp" "$venv" 2>/dev/null || rm -rf "$tmp"
fi
# Compiled once (a venv cached before this step has none): this machine sets
# PYTHONDONTWRITEBYTECODE, so without .pyc files every start compiles Superset again (~3x slower).
if [ ! -f "$venv/.bytecode" ]; then
    "$venv/bin/python" -m compileall -q -j0 "$venv/lib" >/dev/null 2>&1 || true
    touch "$venv/.bytecode"
fi
echo "$venv"
