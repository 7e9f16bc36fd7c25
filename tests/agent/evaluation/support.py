"""Running `agent-chat eval` as a person does: a real subprocess, with the suite's environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tests.support.processes import ROOT


def write_cases(path: Path, cases: Sequence[dict[str, Any] | str]) -> Path:
    """A JSONL case file; a str is written as the line it is (for broken lines)."""
    lines = [c if isinstance(c, str) else json.dumps(c, ensure_ascii=False) for c in cases]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# The suite's agent env has a 1.5 s model timeout for its timeout tests; a scripted answer that is
# late on a busy machine must not turn into an LLM_ERROR and change an exact score.
MODEL_TIMEOUT = {"LLM__REQUEST_TIMEOUT_S": "60"}


def run_eval(
    args: Sequence[str], env: Mapping[str, str], *, timeout: float = 400
) -> subprocess.CompletedProcess[str]:
    """`agent-chat eval ARGS`; stdout and stderr captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "agent_chat.cli", "eval", *args],
        env={**os.environ, **env, **MODEL_TIMEOUT},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
