"""Which session serves a submit: one `Session` class per mode (CONTRACT.md, "Modes").

`dynamic` is the agent with every tool; `none` is the same agent graph (one thread, one
history) with no tools offered for that run; `yaml` runs a predefined workflow; `diagnose`
is one evidence-based diagnosis run (agent/diagnosis). A mode's class is a `Session`
subclass that overrides `run()` and reuses its persistence (history rows, deferred writes,
the turn record).
"""

from __future__ import annotations

import dataclasses

from agent.diagnosis.session import DiagnosisSession
from agent.inputs import Mode
from agent.session import Session
from agent.workflows.session import WorkflowSession


class PlainSession(Session):
    """Mode `none`: one streamed model answer; the NoTools middleware offers no tools."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.context = dataclasses.replace(self.context, offer_tools=False)


SESSIONS: dict[Mode, type[Session]] = {
    "dynamic": Session,
    "none": PlainSession,
    "yaml": WorkflowSession,
    "diagnose": DiagnosisSession,
}


def session_for(mode: Mode, *, action: str) -> type[Session] | None:
    """The class serving `mode`. A decision (confirm/reject) resumes what is paused: the
    thread's agent call, else a workflow step waiting for confirmation."""
    if action:
        return WorkflowSession
    return SESSIONS.get(mode)
