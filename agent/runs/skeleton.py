"""The run skeleton: what every run does, whatever its kind (docs/architecture.md, "A run").

    serve()   a start slot (admission.py) -> take the lease (busy, archived, not found)
              -> hooks.started(grant)
              -> drive(run, kind) -> hooks.finished(outcome)
              -> the end: the turn's row, its debug record, the hooks' closing parts (usage)
                 and the lease's release in one request -> hooks.flush()
    drive()   routing.route() picks the kind -> kind.prepare()
              -> kind.execute() under the run's deadline and lease (Run.running)
              ended early (stop, deadline, lease lost, daily budget): kind.stop(reason)
                          closes what is open; the deadline's and the budget's error is shown
              an error:   the writes queued so far are stored, then the error is shown
              finally:    the finish, once (deferred writes; the assistant row and debug
                          record prepared for the end), then kind.stored()

A kind (agent/runs/kinds/: dynamic, none, workflow, diagnose) implements `RunKind` and uses the
`Run` it is given (agent/runs/state.py): its history writes, deferred writes, the deadline, the
lease check, writing into the thread, superseding what a new message replaces. A kind never
calls another kind or a base class; routing picks one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from agent import inputs
from agent.backend_client import BackendError
from agent.context import Context
from agent.errors import AgentError, BudgetExhausted, Busy, Code, LeaseLost, UsageLimit
from agent.graph import Agent
from agent.hooks import RunHooks, RunOutcome
from agent.lease import Lease, LeaseHeld
from agent.runs import takeover
from agent.runs.state import Run, RunKind, Services
from agent.stream import Turn

log = logging.getLogger(__name__)


async def drive(run: Run, route: Any) -> None:
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
        await kind.prepare(run)
        executing = True
        try:
            async with run.running(kind.deadline_s(run)):
                await kind.execute(run)
        except TimeoutError:
            await _stop(run, kind, Code.DEADLINE)
            if kind.out_of_time is not None:
                run.turn.fail(BudgetExhausted(kind.out_of_time))
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
        run.turn.fail(exc)
        answered = True
    finally:
        if answered and kind is not None:
            await asyncio.shield(_finish(run, kind))
        else:  # what was queued is stored; the error is shown by the caller
            await asyncio.shield(run.flush())


def _known(kind: RunKind | None) -> RunKind:
    assert kind is not None, "a run executes only once routed"
    return kind


async def _stop(run: Run, kind: RunKind, reason: Code) -> None:
    try:
        await kind.stop(run, reason)
    except Exception:
        log.exception("could not close the stopped run of %s", run.context.conversation_id)


async def _finish(run: Run, kind: RunKind) -> None:
    await run.finish(kind)
    try:
        await kind.stored(run)
    except Exception:
        log.exception("could not complete the stored run of %s", run.context.conversation_id)


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
    """Lease, hooks, run, release: the part of a submit after the user and input are checked.

    The run starts when one of the process's start slots is free (agent/admission.py);
    it gives the slot back when its first model request goes out or it shows its first output.
    """
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
    run: Run | None = None
    try:
        for hook in hooks:
            await hook.started(lease.grant)
        run = Run(services, turn=turn, context=context, submit=submit, lease=lease, hooks=hooks)
        await drive(run, route)
    except BaseException as exc:
        failure = exc
        raise
    finally:
        _finished(hooks, _outcome(turn, failure), turn)
        await asyncio.shield(_end(run, lease, hooks))
        if lease.archived:
            await asyncio.shield(_delete_thread(services.agent, context.conversation_id))


async def _end(run: Run | None, lease: Lease, hooks: Sequence[RunHooks]) -> None:
    """The run's end: what the run and its hooks left to store, and the lease's release, in
    one request; then what a hook writes on its own."""
    parts: dict[str, Any] = dict(run.ending) if run is not None else {}
    for hook in hooks:
        try:
            parts.update(hook.closing())
        except Exception:
            log.exception("a run hook failed to close")
    answer = await lease.release(parts)
    if run is not None:
        run.stored(answer)
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


async def _take_lease(
    services: Services, context: Context, submit: inputs.Submit, *, run_id: str | None = None
) -> Lease:
    """Take the conversation's lease; the backend checks ownership in the same call (someone
    else's conversation is 404) and refuses an archived one, so a run needs one round trip
    before its first model call."""
    settings = services.settings.agent
    lease = Lease(
        services.client,
        context,
        ttl_s=settings.lease_ttl_s,
        run_id=run_id,
        owner_url=settings.advertise_url,  # where viewers on other replicas reach this run
    )
    try:
        # busy: taken from a holder found dead, or waited for (agent/runs/takeover.py)
        wait_s = settings.confirm_wait_s if submit.action else 0
        await takeover.acquire(
            lease, services.client, context, wait_s=wait_s, ttl_s=settings.lease_ttl_s
        )
    except LeaseHeld as exc:
        raise Busy("This conversation is busy with another run.") from exc
    except BackendError as exc:
        if exc.code == Code.CONVERSATION_ARCHIVED:
            if submit.action:
                raise AgentError(
                    "This conversation was archived.", code=Code.CHECKPOINT_EXPIRED
                ) from exc
            raise AgentError(
                "This conversation is archived; restore it first.",
                code=Code.CONVERSATION_ARCHIVED,
            ) from exc
        raise exc.shown() from exc
    return lease


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
