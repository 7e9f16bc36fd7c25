"""What the kinds of run share: `Services` (one per process) and `Run` (one per run: the
settings, clients and agent, the turn the stream shows, the lease and its check, the deadline,
the history writes and the deferred ones, superseding what a new message replaces), and the
`RunKind` protocol a kind implements. The lifecycle around them is agent/runs/skeleton.py.
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

from agent import hitl, inputs, resources, writes
from agent.admission import Admission
from agent.backend_client import BackendClient, BackendError
from agent.config import Settings
from agent.context import Context
from agent.debug.recorder import CallRecorder
from agent.debug.scrub import Scrubber
from agent.errors import Code, LeaseLost, Unavailable
from agent.graph import Agent, recursion_limit
from agent.hooks import RunHooks
from agent.lease import Lease, end_run
from agent.stream import Turn

log = logging.getLogger(__name__)
SUPERSEDED = "superseded by a new message"
# why a run may not go on, by the code of its LeaseLost (Run.check)
LEASE_LOST = {
    Code.CONVERSATION_ARCHIVED: "This conversation was archived during the reply.",
    Code.CONVERSATION_BUSY: "Another run took this conversation.",
}
UNSAVED = "Your message could not be saved (the platform did not answer); send it again."


class RunKind(Protocol):
    """One kind of run; the skeleton (agent/runs/skeleton.py) calls it in this order.

    `prepare` reads and checks what the run needs (nothing is shown or run yet); `execute` runs
    it under the run's deadline (`deadline_s`) and lease; `stop(reason)` closes what is open when
    the run ends early: the person's stop (CANCELLED), the deadline (DEADLINE), a lost lease
    (CONVERSATION_BUSY, CONVERSATION_ARCHIVED) or the daily budget (USAGE_LIMIT); `record` is the
    (content, metadata) of the turn's assistant history row; `stored` follows once it is stored.
    """

    @property
    def links_row(self) -> bool:
        """The row is stored as the run ends, before the lease's release, for a kind that needs
        its id in `stored` (a workflow links its execution to it); else it rides on the release."""

    @property
    def out_of_time(self) -> str | None:
        """The turn's error past the deadline; None for a kind whose `stop` shows it itself."""

    def deadline_s(self, run: Run) -> float: ...

    async def prepare(self, run: Run) -> None: ...

    async def execute(self, run: Run) -> None: ...

    async def stop(self, run: Run, reason: Code) -> None: ...

    def record(self, run: Run) -> tuple[str, dict[str, Any]]: ...

    async def stored(self, run: Run) -> None: ...


class Services:
    """What the process shares between runs: settings, the backend client, the agent, the
    agent's model and tools (also used by workflow steps), and the starting runs' slots."""

    def __init__(
        self,
        *,
        settings: Settings,
        client: BackendClient,
        agent: Agent,
        model: BaseChatModel,
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
        # from the turn's first output on, writes start as they are queued (`later`)
        self._writing = turn.version > 0
        turn.on_first_output.append(self.start_writes)
        self.unsaved = False  # a message of the person's was not stored (the backend stayed away)

    def config_with(self, *handlers: BaseCallbackHandler) -> RunnableConfig:
        """The run's config with callback handlers of one step of its own added."""
        return {**self.config, "callbacks": [*self.callbacks, *handlers]}

    # -- the lease and the deadline -----------------------------------------------------------

    @property
    def lease_gone(self) -> bool:
        """Whether the lease is lost (another run took it) or the conversation was archived
        under the run: the one reading of a lost lease (`check` raises on it)."""
        return self.lease.lost or self.lease.archived

    def check(self) -> None:
        """Raise LeaseLost if the run may not go on: the conversation was archived under it,
        or another run took its lease. Every kind calls it between its steps."""
        for code, gone in (
            (Code.CONVERSATION_ARCHIVED, self.lease.archived),
            (Code.CONVERSATION_BUSY, self.lease.lost),
        ):
            if gone:
                raise LeaseLost(LEASE_LOST[code], code=code)

    @contextlib.asynccontextmanager
    async def running(self, seconds: float) -> AsyncIterator[None]:
        """The run's deadline, brought forward to now when the lease is found lost, so that a
        kind stops mid-step (a model's answer reaches the turn by callback, with no step of the
        kind's own in between). Out of the block comes the lease's error, as `check` raises it,
        or TimeoutError past the deadline. The skeleton runs every kind's `execute` in it."""
        try:
            async with asyncio.timeout(seconds) as deadline:
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

    async def write_thread(self, messages: Sequence[BaseMessage], *, as_node: str) -> None:
        """Add `messages` to the conversation's agent thread as if node `as_node` wrote them
        (closing open calls, a stopped run's partial answer, a workflow's or diagnosis's
        question and answer for later turns): the one place a kind writes into the thread.
        Nothing once the lease is lost: the run that took it owns the thread (and closes what
        this one left open)."""
        if self.lease_gone:
            log.info("not writing into %s: its lease is lost", self.context.conversation_id)
            return
        await self.agent.aupdate_state(self.config, {"messages": list(messages)}, as_node=as_node)

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
        """Persist in the background from the turn's first output on (`Turn.on_first_output`,
        the one trigger for every kind); awaited before the turn is saved (`flush`).

        Deferred until then rather than started at once: under a burst of submits the
        backend's writes would otherwise delay every run's first model call. Once the turn
        has shown something, a write starts as it is queued.
        """
        self._deferred.append(write)
        if self._writing:
            self.start_writes()

    def start_writes(self) -> None:
        """Start the writes `later` deferred, and any queued from now on (idempotent)."""
        self._writing = True
        self._writes.extend(asyncio.create_task(write) for write in self._deferred)
        self._deferred.clear()

    async def flush(self) -> None:
        """Start and await every write queued so far (a failed one is logged, never raised)."""
        self.start_writes()
        writes_, self._writes = self._writes, []
        for result in await asyncio.gather(*writes_, return_exceptions=True):
            if isinstance(result, BaseException):
                log.warning("a deferred write failed: %r", result)

    async def finish(self, kind: RunKind) -> None:
        """Persist the turn after the messages written before it (once; later calls are no-ops).

        The turn's assistant row and its debug record ride on the run's end: the lease's
        release stores them in the same request (`serve`), one round trip instead of three;
        a kind that `links_row` has them stored at once instead, for `stored` to use its id.
        """
        if self._finished:
            return
        self._finished = True
        await self.flush()
        if self.unsaved:  # the answer stands, but the history lacks what it answers: say so
            self.turn.fail(Unavailable(UNSAVED))
        if self.turn.entries:
            content, metadata = kind.record(self)
            self.ending["message"] = {"role": "assistant", "content": content, "metadata": metadata}
            self.ending["debug"] = self.recorder.record(self._scrubber())
        if kind.links_row and self.ending:
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

    async def cancel_waiting_workflows(self) -> list[hitl.Pending]:
        """Cancel the conversation's workflow step waiting for a confirmation (a new message
        supersedes it, as it rejects a pending agent call); the calls it waited on. No request
        when the lease answer said no execution waits. BackendError when refused."""
        if not self.lease.thread_has("workflow_waiting"):
            return []
        path = f"/api/workflow/conversations/{self.context.conversation_id}/executions"
        body = await self.client.call(self.context, "POST", path + "/cancel-waiting")
        found = (hitl.Pending.from_record(e.get("pending") or {}) for e in body.get("items", []))
        return [pending for pending in found if pending is not None]

    async def supersede_workflows(self) -> None:
        """Cancel a waiting workflow step (a deferred write: the run goes on if it fails) and
        record each call it waited on as rejected in the history."""
        try:
            cancelled = await self.cancel_waiting_workflows()
        except BackendError as exc:
            log.warning("could not cancel waiting workflows: %s", exc)
            return
        for pending in cancelled:
            await self.append(**hitl.decision_record(pending, "reject", reason=SUPERSEDED))
