"""The run skeleton: what every run does, whatever its kind (docs/architecture.md, "A run"),
and the one writer of what a kind returns.

    serve()   every hook wired (around, callbacks, first_output, started, finished, closing,
              flush) -> a start slot (admission.py) -> take the lease (busy, archived, not found)
              -> hooks.started(grant) -> drive(run, kind) -> hooks.finished(outcome)
              -> the end: the turn's row, its debug record, the hooks' closing parts (usage)
                 and the lease's release in one request -> hooks.flush()
    drive()   routing.route() picks the kind -> kind.check() -> for a new message, supersede
              what it replaces (supersede.py) -> kind.prepare()
              -> kind.execute() under the run's deadline and lease (Run.running)
              ended early (stop, deadline, lease lost, daily budget): kind.stop(reason)
                          closes what is open; the deadline's and the budget's error is shown
              an error:   the writes queued so far are stored, then the error is shown
              finally:    the finish, once: the history writes awaited, then the kind's
                          `result` (result.py) written: the thread (never once the lease is
                          lost), the turn's row and debug record for the end, then `result.then`

A kind (agent/runs/kinds/: dynamic, none, workflow, diagnose) implements `RunKind` and sees the
`Run` it is given (agent/runs/state.py): who asks and what, a `Show` handle on the turn, its
history writes, the deadline and the lease check. A kind never calls another kind or a base
class, and never writes the thread or the turn's row: it returns them; routing picks one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from agent import inputs
from agent.context import Context
from agent.debug.recorder import CallRecorder
from agent.debug.scrub import Scrubber
from agent.errors import BudgetExhausted, Code, LeaseLost, Unavailable, UsageLimit
from agent.graph import Agent
from agent.hooks import RunHooks, RunOutcome
from agent.lease import Lease, end_run
from agent.runs import takeover
from agent.runs.result import RunResult, ThreadWrite
from agent.runs.state import Run, RunKind, Services
from agent.runs.supersede import supersede
from agent.stream import Show, Turn

log = logging.getLogger(__name__)
UNSAVED = "Your message could not be saved (the platform did not answer); send it again."
_take_lease = takeover.take_lease


class End:
    """What the run's end stores: the turn's row and debug record (once the run finished),
    and the row's id once it is stored (every message from then on carries it)."""

    def __init__(self, turn: Turn, recorder: CallRecorder) -> None:
        self.turn = turn
        self.recorder = recorder  # every model call of the turn, for its debug record
        self.parts: dict[str, Any] = {}
        self.message_id: int | None = None
        self.finished = False

    def stored(self, answer: Mapping[str, Any]) -> None:
        if (message_id := answer.get("message_id")) is not None:
            self.message_id = int(message_id)
            self.turn.identify(self.message_id)  # the final value shows it


def open_run(
    services: Services,
    *,
    turn: Turn,
    context: Context,
    submit: inputs.Submit,
    lease: Lease,
    hooks: Sequence[RunHooks] = (),
) -> tuple[Run, End]:
    """The run a kind sees (a `Show` on the turn, the hooks' callbacks in its config) and its
    end; its history writes start with the turn's first output."""
    recorder = CallRecorder()
    callbacks = [recorder, *(c for h in hooks for c in h.callbacks())]
    run = Run(
        services,
        show=Show(turn),
        context=context,
        submit=submit,
        lease=lease,
        callbacks=callbacks,
        writing=turn.version > 0,
    )
    turn.on_first_output.append(run.history.start)
    return run, End(turn, recorder)


async def drive(run: Run, route: Any, end: End) -> None:
    """Run one submit under its lease: the kind `route(run)` picks, its `execute` under the
    run's deadline and lease (`Run.running`), each early end closed by the kind's `stop`, and
    the finish in a `finally` so that every path stores what it queued. The one place a run's
    end is decided:

        done, past the deadline, the daily budget   the answer (and the error) is stored
        the person's stop                           what was said is stored, then the cancel
        the lease lost, an error in `prepare`       what was queued is stored, the error raised
    """
    kind: RunKind | None = None
    executing = answered = False
    try:
        kind = await route(run)
        await kind.check(run)
        at_once = kind.supersedes_at_once
        superseded = None if run.submit.action else await supersede(run, at_once=at_once)
        await kind.prepare(run, superseded)
        executing = True
        try:
            async with run.running(kind.deadline_s(run)):
                await kind.execute(run)
        except TimeoutError:
            await _stop(run, kind, Code.DEADLINE)
            if kind.out_of_time is not None:
                end.turn.fail(BudgetExhausted(kind.out_of_time))
        answered = True
    except asyncio.CancelledError:
        if executing:
            await asyncio.shield(_stop(run, _known(kind), Code.CANCELLED))
            answered = True
        raise
    except LeaseLost as exc:
        # another run owns the conversation now (or it was archived): the kind closes what is
        # its own, and the turn is no answer to store
        if executing:
            await asyncio.shield(_stop(run, _known(kind), Code(exc.code)))
        raise
    except UsageLimit as exc:
        # The daily budget was reached between two model calls: the run stops there as a stop
        # does (open calls closed) and stores what it had said, with the error after it.
        if not executing:
            raise
        await asyncio.shield(_stop(run, _known(kind), Code.USAGE_LIMIT))
        end.turn.fail(exc)
        answered = True
    finally:
        await asyncio.shield(_finish(run, kind, end, answered=answered))


def _known(kind: RunKind | None) -> RunKind:
    assert kind is not None, "a run executes only once routed"
    return kind


async def _stop(run: Run, kind: RunKind, reason: Code) -> None:
    try:
        await kind.stop(run, reason)
    except Exception:
        log.exception("could not close the stopped run of %s", run.context.conversation_id)


async def _finish(run: Run, kind: RunKind | None, end: End, *, answered: bool) -> None:
    """Once: the history writes awaited, then what the kind returned written. Not answered
    (an error, a lost lease): what it left for the thread only; the error is shown by the
    caller."""
    if end.finished:
        return
    end.finished = True
    await run.history.flush()
    if kind is None:
        return
    if answered and run.history.unsaved:  # the answer stands, but the history lacks its question
        end.turn.fail(Unavailable(UNSAVED))
    result: RunResult = kind.result(run)
    if not answered:  # the error the caller shows is the run's, not this write's
        try:
            await write_thread(run, result.thread)
        except Exception:
            log.exception("could not write the failed run of %s", run.context.conversation_id)
        return
    await write_thread(run, result.thread)
    if end.turn.entries and result.row is not None:
        content, metadata = result.row
        end.parts["message"] = {"role": "assistant", "content": content, "metadata": metadata}
        end.parts["debug"] = end.recorder.record(_scrubber(run))
    if result.then is None:
        return  # the row rides on the lease's release (`_end`)
    if end.parts:  # stored now, for `then` to have its id
        end.stored(await end_run(run.client, run.context, end.parts))
        end.parts = {}
    try:
        await result.then(end.message_id)
    except Exception:
        log.exception("could not complete the stored run of %s", run.context.conversation_id)


async def write_thread(run: Run, writes: Sequence[ThreadWrite]) -> None:
    """Add what the kind returned to the conversation's agent thread, in order: the one place
    a run writes into it. Nothing once the lease is lost: the run that took it owns the thread
    (and closes what this one left open)."""
    for write in writes:
        if run.lease_gone:
            log.info("not writing into %s: its lease is lost", run.context.conversation_id)
            return
        values = {"messages": list(write.messages)}
        await run.agent.aupdate_state(run.config, values, as_node=write.as_node)


def _scrubber(run: Run) -> Scrubber:
    """What the debug record must never hold: every secret this run knows."""
    settings = run.settings
    return Scrubber(
        (
            *(s.get_secret_value() for s in (settings.llm_api_key, settings.jwt_secret) if s),
            *(s.get_secret_value() for s in (settings.agent_client_secret,) if s),
            run.context.user_token,
            run.client.current_service_token(),
        )
    )


async def serve(
    services: Services,
    *,
    turn: Turn,
    context: Context,
    submit: inputs.Submit,
    hooks: Sequence[RunHooks],
    route: Any,
    run_id: str | None = None,
) -> None:
    """Hooks, lease, run, release: the part of a submit after the user and input are checked.
    Every hook is wired here (agent/hooks.py has the order).

    The run starts when one of the process's start slots is free (agent/admission.py);
    it gives the slot back when its first model request goes out or it shows its first output.
    """
    with contextlib.ExitStack() as around:
        for hook in hooks:
            around.enter_context(hook.around())
        for hook in hooks:
            turn.on_first_output.append(hook.first_output)
        async with contextlib.AsyncExitStack() as slot:
            try:
                ticket = await slot.enter_async_context(services.admission.admit())
                turn.on_first_output.append(ticket.leave)
                lease = await _take_lease(services, context, submit, run_id=run_id)
            except BaseException as exc:
                _finished(hooks, _outcome(turn, exc), turn)
                raise
            await _under_lease(
                services, lease, turn=turn, context=context, submit=submit, hooks=hooks, route=route
            )


async def _under_lease(
    services: Services,
    lease: Lease,
    *,
    turn: Turn,
    context: Context,
    submit: inputs.Submit,
    hooks: Sequence[RunHooks],
    route: Any,
) -> None:
    failure: BaseException | None = None
    end: End | None = None
    try:
        for hook in hooks:
            await hook.started(lease.grant)
        run, end = open_run(
            services, turn=turn, context=context, submit=submit, lease=lease, hooks=hooks
        )
        await drive(run, route, end)
    except BaseException as exc:
        failure = exc
        raise
    finally:
        _finished(hooks, _outcome(turn, failure), turn)
        await asyncio.shield(_end(end, lease, hooks))
        if lease.archived:
            await asyncio.shield(_delete_thread(services.agent, context.conversation_id))


async def _end(end: End | None, lease: Lease, hooks: Sequence[RunHooks]) -> None:
    """The run's end: what the run and its hooks left to store, and the lease's release, in
    one request; then what a hook writes on its own."""
    parts: dict[str, Any] = dict(end.parts) if end is not None else {}
    for hook in hooks:
        try:
            parts.update(hook.closing())
        except Exception:
            log.exception("a run hook failed to close")
    answer = await lease.release(parts)
    if end is not None:
        end.stored(answer)
    for hook in hooks:
        try:
            await hook.flush()
        except Exception:
            log.exception("a run hook failed to flush")


async def _delete_thread(agent: Agent, thread_id: str) -> None:
    """Delete the thread of a conversation archived while this run had stalled past its
    lease: the archive deleted the thread before this run's last checkpoints (FR-029)."""
    saver = agent.checkpointer
    if isinstance(saver, BaseCheckpointSaver):
        await saver.adelete_thread(thread_id)


def _outcome(turn: Turn, failure: BaseException | None) -> RunOutcome:
    """How a run ended, for the hooks (the `outcome` label of agent_runs_total)."""
    if isinstance(failure, asyncio.CancelledError):
        return RunOutcome.STOPPED
    if failure is not None:
        return RunOutcome.ERROR
    kinds = [e.metadata.get("type") for e in turn.entries]
    if "error" in kinds:
        return RunOutcome.ERROR
    if "confirm_required" in kinds:
        return RunOutcome.CONFIRMATION
    return RunOutcome.COMPLETED


def _finished(hooks: Sequence[RunHooks], outcome: RunOutcome, turn: Turn) -> None:
    messages = turn.snapshot()
    for hook in hooks:
        try:
            hook.finished(outcome, messages)
        except Exception:
            log.exception("a run hook failed on finish")
