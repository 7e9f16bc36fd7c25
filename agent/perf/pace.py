"""How often each stream of this process may show new text: the interval grows with the open
streams past FULL_RATE_STREAMS, so text arrives in larger pieces under load.

Saves: Gradio's per-update work (diff, store, send: the same CPU per update whatever its size)
once many streams are open; every first token no longer waits behind everyone's updates.
Bench: `uv run python bench/agent_ttft.py --levels 1,10,25` (first token) and
`bench/agent_load.py --levels 25,50` (first output, CPU per turn).
Remove when: Gradio's per-update cost no longer dominates a streamed token (its own queue
coalesces updates), or the stream is sent by something other than Gradio. One object a process
(`PACE`): it counts the streams of this process, which is what shares the CPU.
"""

from __future__ import annotations

MIN_INTERVAL_S = 0.05  # at most ~20 updates a second per stream ...
FULL_RATE_STREAMS = 20  # ... while at most this many stream at once; then fewer
MAX_INTERVAL_S = 0.25


class Pace:
    """How often each stream of this process may show new text.

    Every update costs the process about the same CPU (Gradio diffs, stores and sends it), so
    past FULL_RATE_STREAMS open streams the interval grows with their number (up to
    MAX_INTERVAL_S): text arrives in larger pieces instead of every first token waiting
    behind everyone's updates. The first update of a stream and cards are never held back.
    """

    def __init__(self) -> None:
        self.open = 0

    def interval(self) -> float:
        crowd = max(1.0, self.open / FULL_RATE_STREAMS)
        return min(MAX_INTERVAL_S, MIN_INTERVAL_S * crowd)


PACE = Pace()
