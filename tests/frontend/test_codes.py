"""The browser's list of codes and tool names is generated from the ground floor, never written
by hand: the committed frontend/src/lib/codes.ts is what the generator makes of common/codes.py
`Code` (every code of the agent's stream and of the backend's envelope) and common/tools.py."""

from __future__ import annotations

import subprocess
import sys

from common.codes import BACKEND, Code
from tests.support.processes import ROOT

SCRIPT = ROOT / "frontend" / "scripts" / "gen_codes.py"
TARGET = ROOT / "frontend" / "src" / "lib" / "codes.ts"


def test_the_committed_codes_match_a_fresh_generation_from_the_agent():
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr + "\nregenerate with: make api-types"
    assert "matches the shared codes and tools" in result.stdout


def _generator():
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import gen_codes
    finally:
        sys.path.remove(str(SCRIPT.parent))
    return gen_codes


def test_every_backend_code_is_in_the_browsers_list_of_backend_codes():
    text = TARGET.read_text(encoding="utf-8")
    listed = text.split("export const BACKEND_CODES = [", 1)[1].split("] as const;", 1)[0]
    assert {c.strip().strip('",') for c in listed.split()} == {c.value for c in BACKEND}
    assert "SQL_REJECTED" in listed and "VALIDATION_FAILED" in listed


def test_every_code_is_in_exactly_one_of_the_browsers_groups():
    groups = _generator().sections()
    flat = [code for codes in groups.values() for code in codes]
    assert sorted(flat) == sorted(code.value for code in Code)
    assert len(flat) == len(set(flat))
    assert "RUN_INTERRUPTED" in groups["TURN_ERROR_CODES"]
    assert "TRUNCATED" in groups["NOTICE_CODES"]
    assert "REJECTED" in groups["TOOL_ERROR_CODES"]
    assert "SQL_TIMEOUT" in groups["PLATFORM_CODES"]
    # the backend's own sections are exactly the codes it writes that the stream does not name
    stream = {code for name, codes in groups.items() if name != "PLATFORM_CODES" for code in codes}
    assert set(groups["PLATFORM_CODES"]) == {c.value for c in BACKEND} - stream
    for code in Code:
        assert f'  "{code.value}",\n' in TARGET.read_text(encoding="utf-8")
