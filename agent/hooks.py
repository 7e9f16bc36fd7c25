"""Where usage, metrics and traces attach to a run.

The runner (agent/run.py) builds one `RunHooks` per hook factory for every run; the run
skeleton (agent/runs/skeleton.py `serve`, the one place they are wired) calls each at fixed
points; a hook overrides what it needs. The order, for one run:

    around()            entered first, left last, inside the run's task (a trace span)
    callbacks()         added to the run's LangChain config: every model and tool call of every
                        mode (agent rounds, chat-only, workflow llm_call steps, diagnosis rounds)
    started(grant)      once the lease is held, before any model call; `grant` is the backend's
                        lease answer. Raising an AgentError (UsageLimit) refuses the run there.
    first_output()      when the turn shows its first text or card
    finished(...)       once, with how the run ended and the turn's final messages
    closing()           the parts the hook stores with the run's end: they ride on the lease's
                        release with the turn's history row, one request for all (usage)
    flush()             awaited after the release (writes the hook sends on its own)

A hook never sees the user's JWT except through `info.context` (never log or store it).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler

from agent.context import Context


class RunOutcome(StrEnum):
    """How a run ended (the `outcome` label of agent_runs_total)."""

    COMPLETED = "completed"  # answered
    CONFIRMATION = "confirmation"  # ended waiting for a person's decision
    STOPPED = "stopped"  # an explicit stop or cancel, the deadline, the lease taken away
    ERROR = "error"  # ended with a stream error
    INTERRUPTED = "interrupted"  # its process died (seen by another replica)


@dataclass(frozen=True)
class RunInfo:
    """What a hook knows of the run it observes."""

    run_id: str
    mode: str  # "dynamic" | "none" | "yaml" | "diagnose"
    action: str  # "" for a new message, else the decision
    context: Context
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)  # traceparent, ...
    evaluation: bool = False  # an `agent-chat eval` run, not a person's
    turn: Any = field(default=None, repr=False, compare=False)  # the run's Turn (agent/stream/)


class RunHooks:
    """One run's observer; every method is a no-op here."""

    def __init__(self, info: RunInfo) -> None:
        self.info = info

    @contextlib.contextmanager
    def around(self) -> Iterator[None]:
        yield

    def callbacks(self) -> Sequence[BaseCallbackHandler]:
        return ()

    async def started(self, grant: Mapping[str, Any]) -> None:
        return None

    def first_output(self) -> None:
        return None

    def finished(self, outcome: RunOutcome, messages: Sequence[Mapping[str, Any]]) -> None:
        return None

    def closing(self) -> Mapping[str, Any]:
        return {}

    async def flush(self) -> None:
        return None


HookFactory = Callable[[RunInfo], RunHooks]
