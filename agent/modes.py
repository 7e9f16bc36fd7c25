"""Which session serves a submit: one `Session` class per mode (CONTRACT.md, "Modes").

`dynamic` is the agent with every tool; `diagnose` is one evidence-based diagnosis run
(agent/diagnosis). A mode's class is a `Session` subclass that overrides
`run()` and reuses its persistence (history rows, deferred writes, the turn record).
"""

from __future__ import annotations

from agent.diagnosis.session import DiagnosisSession
from agent.inputs import Mode
from agent.session import Session

SESSIONS: dict[Mode, type[Session]] = {"dynamic": Session, "diagnose": DiagnosisSession}


def session_for(mode: Mode, *, action: str) -> type[Session] | None:
    """The class serving `mode`; a decision (confirm/reject) resumes the thread's agent."""
    if action:
        return Session
    return SESSIONS.get(mode)
