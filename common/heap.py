"""The garbage collector of a long-running server process (agent, backend).

Measured in the agent at 25 conversations (bench/agent_load.py, Python 3.11, gc.callbacks):
with Python's defaults the cyclic collector took 0.87 s of about 10 s of the agent's CPU in
one level, and each full collection walked every object start-up had made (Gradio, LangChain,
pandas, the compiled graph): 260-290 ms each, a pause every open stream waited for. Those
objects live as long as the process, so `settle()` moves them out of the collector's sight
(`gc.freeze`) once start-up is done (a full collection is then ~50 ms), and young collections
run every YOUNG_THRESHOLD allocations instead of every 700 (321 of them took 0.35 s, 23 now
take 0.16): a streamed token's short-lived objects are freed by reference counting anyway.
In all 0.87 -> 0.22 s of collection per level; docs/architecture.md has the turn figures.

A performance trick (a process-wide setting), the one both processes share, so it lives on the
ground floor rather than in agent/perf/ with the others.
Saves: 0.87 -> 0.22 s of collection per bench level; full-collection pauses 260-290 -> ~50 ms.
Bench: `uv run python bench/agent_load.py --levels 25,50 --targets echo,agent1` (agent CPU per
turn; `gc.callbacks` timings with `--profile DIR`).
Remove when: start-up no longer builds a long-lived heap of hundreds of thousands of objects,
or Python's collector stops walking the old generation (an incremental collector).
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 50_000
_serving = False


def serving() -> None:
    """This process is a server (agent-chat agent / backend): `settle()` will act. An app
    built inside a test process leaves that process's collector alone."""
    global _serving
    _serving = True


def settle() -> None:
    """Call once, when start-up has built what lives as long as the process."""
    if not _serving:
        return
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, older, oldest)
