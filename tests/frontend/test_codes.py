"""The browser's list of stream codes and tool names is generated from the agent, never written
by hand: the committed frontend/src/lib/codes.ts is what the generator makes of agent/errors.py
`Code` and agent/tools/names.py today."""

from __future__ import annotations

import subprocess
import sys

from agent.errors import Code
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
    assert "matches the agent's codes and tools" in result.stdout


def test_every_code_of_the_agent_is_in_exactly_one_of_the_browsers_groups():
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import gen_codes
    finally:
        sys.path.remove(str(SCRIPT.parent))
    groups = gen_codes.sections()
    flat = [code for codes in groups.values() for code in codes]
    assert sorted(flat) == sorted(code.value for code in Code)
    assert len(flat) == len(set(flat))
    assert "RUN_INTERRUPTED" in groups["TURN_ERROR_CODES"]
    assert "TRUNCATED" in groups["NOTICE_CODES"]
    assert "REJECTED" in groups["TOOL_ERROR_CODES"]
    for code in Code:
        assert f'  "{code.value}",\n' in TARGET.read_text(encoding="utf-8")
