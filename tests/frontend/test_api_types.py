"""The browser's REST types are generated from the backend's OpenAPI, never written by hand."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from tests.support.processes import ROOT

SCRIPT = ROOT / "frontend" / "scripts" / "gen_api.py"
GENERATOR = ROOT / "frontend" / "node_modules" / "openapi-typescript" / "bin" / "cli.js"


def test_the_committed_rest_types_match_a_fresh_generation_from_the_backend():
    if shutil.which("node") is None or not GENERATOR.exists():
        pytest.skip("needs Node.js and `npm ci` in frontend/ (make test does both)")
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr + "\nregenerate with: make api-types"
    assert "matches the backend's OpenAPI" in result.stdout
