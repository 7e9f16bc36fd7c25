"""Which run serves a submit: the one place a message or a decision is routed to its kind.

a decision (confirm/reject)  the thread's pending agent call       -> DynamicRun (resume)
                             else a workflow step waiting for one  -> WorkflowRun (resume)
                             else                                  -> DynamicRun (it says
                                  CHECKPOINT_EXPIRED or NO_PENDING_CONFIRMATION)
mode dynamic                                                       -> DynamicRun
mode none                                                          -> NoneRun (no tools)
mode yaml      the workflow named by options.workflow, else the one its keywords match
                                                                   -> WorkflowRun
               none matches: a NO_WORKFLOW_MATCHED notice          -> DynamicRun
mode diagnose                                                      -> DiagnosisChat
"""

from __future__ import annotations

from agent import hitl
from agent.backend_client import BackendError
from agent.errors import Code, Unavailable
from agent.runs.kinds.diagnose import DiagnosisChat
from agent.runs.kinds.dynamic import DynamicRun
from agent.runs.kinds.none import NoneRun
from agent.runs.kinds.workflow import WorkflowRun, choose
from agent.runs.state import Run, RunKind
from agent.runs.supersede import NOT_RECORDED
from agent.workflows import definitions
from agent.workflows.records import Records


async def route(run: Run) -> RunKind:
    """The kind that serves this run (it reads what it needs through the run's identity)."""
    submit = run.submit
    try:
        if submit.action:
            return await _decision(run)
        if submit.mode == "none":
            return NoneRun()
        if submit.mode == "diagnose":
            return DiagnosisChat()
        if submit.mode == "yaml":
            found = await definitions.fetch(run.client, run.context)
            chosen = choose(submit.options.workflow, submit.text, found)
            if chosen is not None:
                return WorkflowRun(definition=chosen)
            run.show.notice(
                Code.NO_WORKFLOW_MATCHED,
                "No workflow matches this message; the assistant answers it directly.",
            )
        return DynamicRun()
    except BackendError as exc:
        raise Unavailable(NOT_RECORDED) from exc


async def _decision(run: Run) -> RunKind:
    snapshot = await run.agent.aget_state(run.config)
    if hitl.pending_of(snapshot):
        return DynamicRun(snapshot)  # the agent's own confirmation
    waiting = await Records(run.client, run.context).waiting()
    if waiting is None:
        return DynamicRun(snapshot)  # says CHECKPOINT_EXPIRED or NO_PENDING_CONFIRMATION
    return WorkflowRun(waiting=waiting)
