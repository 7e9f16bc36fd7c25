"""The run skeleton: what every run does, whatever its kind (docs/architecture.md, "Run path").

    serve()   a start slot (admission.py) -> take the lease (busy, archived, not found)
              -> hooks.started(grant)
              -> drive(run, kind) -> hooks.finished(outcome)
              -> the end: the turn's row, its debug record, the hooks' closing parts (usage)
                 and the lease's release in one request -> hooks.flush()
    drive()   routing.route() picks the kind -> kind.prepare() -> kind.execute()
              cancelled:  kind.stop() closes what is open, then the finish
              an error:   the writes queued so far are stored, then the error is shown
              finally:    the finish (deferred writes; the assistant row and debug record
                          are prepared for the end)

A kind (dynamic, chat-only, workflow, diagnosis) implements `RunKind` and uses the `Run` it is
given: its history writes, deferred writes, the deadline, the lease check, superseding what a
new message replaces. A kind never calls another kind or a base class; routing picks one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Coroutine, Mapping, Sequence
from typing import Any, Protocol

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver

from agent import hitl, inputs, resources
from agent.backend_client import BackendClient, BackendError
from agent.config import Settings
from agent.context import Context
from agent.debug.recorder import CallRecorder
from agent.debug.scrub import Scrubber
from agent.errors import AgentError, Busy, Code, NotFound, Unauthorized, Unavailable, UsageLimit
from agent.graph import Agent, build_model, recursion_limit
from agent.lease import Busy as LeaseBusy
from agent.lease import Lease, end_run
from agent.runs import takeover, writes
from agent.runs.admission import Admission
from agent.runs.hooks import Outcome, RunHooks
from agent.stream import Turn

log = logging.getLogger(__name__)
SUPERSEDED = "superseded by a new message"
UNSAVED = "Your message could not be saved (the platform did not answer); send it again."


class RunKind(Protocol):
    """One kind of run. `prepare` reads and checks what the run needs (nothing is shown or run
    yet); `execute` runs it; `stop` closes what is open when the run is cancelled; `record`
    is the (content, metadata) of the turn's assistant history row."""

    async def prepare(self, run: Run) -> None: ...

    async def execute(self, run: Run) -> None: ...

    async def stop(self, run: Run) -> None: ...

    def record(self, run: Run) -> tuple[str, dict[str, Any]]: ...


class Services:
    """What the process shares between runs: settings, the backend client, the agent, the
    agent's model and tools (also used by workflow steps), and the starting runs' slots."""

    def __init__(
        self,
        *,
        settings: Settings,
        client: BackendClient,
        agent: Agent,
        model: BaseChatModel | None,
        tools: Mapping[str, BaseTool],
    ) -> None:
        self.settings = settings
        self.client = client
        self.agent = agent
        self.model = model
        self.tools = dict(tools)
        self.admission = Admission(
            slots=settings.agent.start_slots, hold_s=settings.agent.start_hold_s
        )
        self._diagnosis_model: BaseChatModel | None = None

    def diagnosis_model(self) -> BaseChatModel:
        """The model of diagnosis runs: the agent's (one client for the process, closed with
        it), else one built once on first use."""
        if self.model is not None:
            return self.model
        if self._diagnosis_model is None:
            self._diagnosis_model = build_model(self.settings)
        return self._diagnosis_model


class Run:
    """One run under the conversation's lease: the state every kind shares."""

    def __init__(
        self,
        services: Services,
        *,
        turn: Turn,
        context: Context,
        submit: inputs.Submit,
        lease: Lease,
        hooks: Sequence[RunHooks] = (),
    ) -> None:
        self.services = services
        self.settings = services.settings
        self.client = services.client
        self.agent = services.agent
        self.model = services.model
        self.tools = services.tools
        self.turn = turn
        self.context = context
        self.submit = submit
        self.lease = lease
        self.hooks = tuple(hooks)
        self.recorder = CallRecorder()  # every model call of the turn, for its debug record
        self.callbacks: list[BaseCallbackHandler] = [
            self.recorder,
            *(c for h in self.hooks for c in h.callbacks()),
        ]
        self.config: RunnableConfig = {
            "configurable": {"thread_id": context.conversation_id},
            "recursion_limit": recursion_limit(services.settings),
            "callbacks": self.callbacks,
        }
        self.human: HumanMessage | None = None  # the question as the thread holds it
        self.resources = resources.PreparedResources()
        self.message_id: int | None = None  # the assistant history row of this turn, once saved
        self.ending: dict[str, Any] = {}  # what the run's end stores (finish fills it)
        self._writes: list[asyncio.Task[Any]] = []
        self._deferred: list[Coroutine[Any, Any, Any]] = []
        self._finished = False
        self.unsaved = False  # a message of the person's was not stored (the backend stayed away)

    def config_with(self, *handlers: BaseCallbackHandler) -> RunnableConfig:
        """The run's config with callback handlers of one step of its own added."""
        return {**self.config, "callbacks": [*self.callbacks, *handlers]}

    # -- the lease and the deadline -----------------------------------------------------------

    def check(self) -> None:
        """Raise if the run may not go on: the conversation was archived under it, or another
        run took its lease. Every kind calls it between its steps."""
        if self.lease.archived:
            raise AgentError(
                "This conversation was archived during the reply.",
                code=Code.CONVERSATION_ARCHIVED,
            )
        if self.lease.lost:
            raise Busy("Another run took this conversation.")

    def deadline(self, seconds: float | None = None) -> asyncio.Timeout:
        """The run's deadline (TimeoutError past it); each kind says what that means."""
        return asyncio.timeout(
            seconds if seconds is not None else self.settings.agent.run_deadline_s
        )

    @contextlib.asynccontextmanager
    async def streaming(self) -> AsyncIterator[None]:
        """The run's deadline, brought forward to now when the lease is found lost: a kind
        that streams a model's answer (its tokens reach the turn by callback, with no step of
        the kind's own in between) stops mid-answer. Out of the block comes the lease's error,
        as `check` raises it, or TimeoutError past the deadline."""
        try:
            async with self.deadline() as deadline:
                loop = asyncio.get_running_loop()

                def now() -> None:
                    if not deadline.expired():
                        deadline.reschedule(loop.time())

                with self.lease.on_loss(now):
                    yield
        except TimeoutError:
            self.check()
            raise

    # -- writes -------------------------------------------------------------------------------

    async def append(self, role: str, content: str, metadata: dict[str, Any]) -> int | None:
        """Add a message to the conversation's history (audited by the backend); its id, or
        None when the backend refused it or stayed away past the bound (logged)."""
        path = f"/api/assistant/conversations/{self.context.conversation_id}/messages"
        body = {"role": role, "content": content, "metadata": metadata}
        try:
            created = await writes.send(self.client, self.context, "POST", path, json=body)
        except BackendError as exc:
            log.warning("could not persist a %s message: %s", role, exc)
            self.unsaved = self.unsaved or role == "user"
            return None
        return int(created["id"])

    def append_later(self, role: str, content: str, metadata: dict[str, Any]) -> None:
        self.later(self.append(role, content, metadata))

    def later(self, write: Coroutine[Any, Any, Any]) -> None:
        """Persist in the background once the model answers; awaited before the turn is saved.

        Started after the first output rather than at once: under a burst of submits the
        backend's writes would otherwise delay every run's first model call.
        """
        self._deferred.append(write)

    def start_writes(self) -> None:
        """Start the writes `later` deferred (idempotent)."""
        self._writes.extend(asyncio.create_task(write) for write in self._deferred)
        self._deferred.clear()

    @property
    def deferring(self) -> bool:
        return bool(self._deferred)

    async def flush(self) -> None:
        """Start and await every write queued so far (a failed one is logged, never raised)."""
        self.start_writes()
        writes_, self._writes = self._writes, []
        for result in await asyncio.gather(*writes_, return_exceptions=True):
            if isinstance(result, BaseException):
                log.warning("a deferred write failed: %r", result)

    async def finish(self, kind: RunKind, *, now: bool = False) -> None:
        """Persist the turn after the messages written before it (once; later calls are no-ops).

        The turn's assistant row and its debug record ride on the run's end: the lease's
        release stores them in the same request (`serve`), one round trip instead of three.
        `now` stores them at once instead, for a kind that needs `message_id` before the run
        ends (a workflow links its execution to the row).
        """
        if self._finished:
            return
        self._finished = True
        await self.flush()
        if self.unsaved:  # the answer stands, but the history lacks what it answers: say so
            self.turn.error(Code.BACKEND_UNAVAILABLE, UNSAVED)
        if self.turn.entries:
            content, metadata = kind.record(self)
            self.ending["message"] = {"role": "assistant", "content": content, "metadata": metadata}
            self.ending["debug"] = self.recorder.record(self._scrubber())
        if now and self.ending:
            self.stored(await end_run(self.client, self.context, self.ending))
            self.ending = {}

    def stored(self, answer: Mapping[str, Any]) -> None:
        """The end's answer: the row's id, which every message from now on carries."""
        if (message_id := answer.get("message_id")) is not None:
            self.message_id = int(message_id)
            self.turn.identify(self.message_id)  # the final value shows it

    def _scrubber(self) -> Scrubber:
        """What the debug record must never hold: every secret this run knows."""
        settings = self.settings
        return Scrubber(
            (
                *(s.get_secret_value() for s in (settings.llm_api_key, settings.jwt_secret) if s),
                *(s.get_secret_value() for s in (settings.agent_client_secret,) if s),
                self.context.user_token,
                self.client.current_service_token(),
            )
        )

    # -- superseding what a new message replaces ----------------------------------------------

    def reject_pending(self, snapshot: Any) -> list[BaseMessage]:
        """A new message rejects the thread's pending confirmation (recorded in the history);
        the messages that close the thread's open calls."""
        waiting = hitl.pending_of(snapshot)
        for pending in waiting:
            self.append_later(**hitl.decision_record(pending, "reject", reason=SUPERSEDED))
        return hitl.closing_messages(snapshot, reason="rejected" if waiting else "cancelled")

    async def supersede_workflows(self) -> None:
        """A new message cancels a workflow step waiting for confirmation (as it rejects a
        pending agent call), recorded as a rejection in the history. Nothing to do, and no
        request, when the lease answer said no execution waits."""
        if not self.lease.thread_has("workflow_waiting"):
            return
        path = f"/api/workflow/conversations/{self.context.conversation_id}/executions"
        try:
            body = await self.client.call(self.context, "POST", path + "/cancel-waiting")
        except BackendError as exc:
            log.warning("could not cancel waiting workflows: %s", exc)
            return
        for execution in body.get("items", []):
            pending = hitl.Pending.from_record(execution.get("pending") or {})
            if pending is not None:
                await self.append(**hitl.decision_record(pending, "reject", reason=SUPERSEDED))


async def drive(run: Run, route: Any) -> None:
    """Run one submit under its lease: the kind `route(run)` picks, with the finish in a
    `finally` so that every path stores what it queued."""
    kind: RunKind | None = None
    failed = False
    try:
        kind = await route(run)
        await kind.prepare(run)
        await kind.execute(run)
    except asyncio.CancelledError:
        if kind is not None:
            await asyncio.shield(_stop(run, kind))
        raise
    except UsageLimit as exc:
        # The daily budget was reached between two model calls: the run stops there as a stop
        # does (open calls closed) and stores what it had said, with the error after it.
        if kind is None:
            failed = True
            raise
        await asyncio.shield(_stop(run, kind))
        run.turn.error(exc.code, exc.message, exc.details or None)
    except BaseException:
        failed = True
        raise
    finally:
        if failed or kind is None:
            # an error ends the run: what it queued is stored, the error is shown, and the
            # turn is no answer to store (another run may own the conversation by now)
            await asyncio.shield(run.flush())
        else:
            await asyncio.shield(run.finish(kind))


async def _stop(run: Run, kind: RunKind) -> None:
    try:
        await kind.stop(run)
    except Exception:
        log.exception("could not close the stopped run of %s", run.context.conversation_id)


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

    The run starts when one of the process's start slots is free (agent/runs/admission.py);
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
    except LeaseBusy as exc:
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
        if exc.status in (404, 422):
            raise NotFound("Conversation not found.") from exc
        if exc.status == 401:
            raise Unauthorized(exc.message, code=_auth_code(exc.code)) from exc
        raise Unavailable("The platform is not answering; try again.") from exc
    return lease


def _auth_code(code: str) -> Code:
    """The backend's 401 keeps its code when it is one the stream knows (TOKEN_EXPIRED)."""
    return Code.TOKEN_EXPIRED if code == Code.TOKEN_EXPIRED else Code.UNAUTHORIZED


def _outcome(turn: Turn, failure: BaseException | None) -> Outcome:
    """How a run ended, for the hooks (the `outcome` label of agent_runs_total)."""
    if isinstance(failure, asyncio.CancelledError):
        return Outcome.STOPPED
    if failure is not None:
        return Outcome.ERROR
    kinds = [e.metadata.get("type") for e in turn.entries]
    if "error" in kinds:
        return Outcome.ERROR
    if "confirm_required" in kinds:
        return Outcome.CONFIRMATION
    return Outcome.COMPLETED


def _finished(hooks: Sequence[RunHooks], outcome: Outcome, turn: Turn) -> None:
    messages = turn.snapshot()
    for hook in hooks:
        try:
            hook.finished(outcome, messages)
        except Exception:
            log.exception("a run hook failed on finish")
