"""Gradio's block configs computed once, when the app is built, not on every session and update.

Saves: about a twentieth of an agent turn's CPU (21 blocks' configs, 3 ms, at every session's
start and every `attach`; the history State's config on every streamed value).
Bench: `uv run python bench/live_attach.py --runs 20` (attach p50 452 -> 357-364 ms on a slow
machine) and `bench/agent_load.py --levels 25,50` (agent CPU per turn).
Remove when: Gradio caches a block's config itself (it recomputes it in `get_config`), or when
the pin's upper bound (pyproject.toml, `gradio`) has to move and
tests/agent/unit/test_perf_tricks.py or tests/agent/unit/test_state_configs.py fails: they
check that `Block.get_config` is still the method Gradio calls with an optional class, and that
a frozen config is what Gradio would compute.
"""

from __future__ import annotations

from typing import Any

import gradio as gr


def freeze_configs(demo: gr.Blocks) -> None:
    """Compute each block's config once, when the app is built, not again and again.

    Gradio recomputes a block's config (`inspect.signature` of its constructor and a walk of
    its attributes) for every block of the page when a session starts (every new client,
    every `attach`: 21 blocks, 3 ms of CPU), and for ChatInterface's history State on every
    value a run streams (the /chat endpoint's second output): together about a twentieth of
    an agent turn's CPU. Nothing changes our blocks once the app is mounted (an update makes
    a new block in the session's own copy), so the config is the same every time. Each caller
    gets its own copy of the top level, which is all Gradio changes (it deletes the keys whose
    value is None, and sets a session's `value`).
    """
    for block in demo.blocks.values():
        block.get_config = _FrozenConfig(block.get_config())  # type: ignore[method-assign]


class _FrozenConfig:
    """A block's config computed once; each call returns a fresh copy of its top level."""

    __slots__ = ("_config",)

    def __init__(self, config: dict[str, Any]) -> None:
        self._config = config

    def __call__(self, cls: type[gr.blocks.Block] | None = None) -> dict[str, Any]:
        return dict(self._config)
