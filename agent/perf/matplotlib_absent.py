"""Gradio's `import matplotlib`, failing at once when matplotlib is not installed.

Saves: two searches of the whole sys.path around every streamed update (Gradio tries the import
twice per update; a missing module is searched for again each time).
Bench: `uv run python bench/agent_load.py --levels 25 --targets agent1 --profile DIR`
(`importlib._bootstrap._find_spec` in the samples goes away).
Remove when: Gradio stops importing matplotlib per update, or matplotlib is installed (then
this does nothing). A process-wide setting: a None entry in `sys.modules` is Python's own way
to say a module is absent, so an import anywhere raises ImportError as it would have.
"""

from __future__ import annotations

import importlib.util
import sys


def mark_matplotlib_absent() -> None:
    """Make `import matplotlib` fail at once, if it is not installed."""
    if "matplotlib" not in sys.modules and importlib.util.find_spec("matplotlib") is None:
        sys.modules["matplotlib"] = None  # type: ignore[assignment]
