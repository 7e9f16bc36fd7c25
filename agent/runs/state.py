"""What the kinds of run share: `Services` (one per process), `Run` (one per run: who asks and
what, the clients, the handle that shows things in the turn, the history writes, the lease and
its check, the deadline) and the `RunKind` protocol a kind implements. The lifecycle around
them, and the one writer of what a kind returns, is agent/runs/skeleton.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool

from agent import inputs
from agent.admission import Admission
from agent.backend_client import BackendClient
from agent.config import Settings
from agent.context import Context
from agent.errors import Code, LeaseLost
from agent.graph import Agent, recursion_limit
from agent.lease import Lease
from agent.runs.history import History
from agent.runs.result import RunResult
from agent.stream import Show

if TYPE_CHECKING:
    from agent.runs.supersede import Superseded

log = logging.getLogger(__name__)
# why a run may not go on, by the code of its LeaseLost (Run.check)
LEASE_LOST = {
    Code.CONVERSATION_ARCHIVED: "This conversation was archived during the reply.",
    Code.CONVERSATION_BUSY: "Another run took this conversation.",
}


class RunKind(Protocol):
    """One kind of run; the skeleton (agent/runs/skeleton.py) calls it in this order.

    `check` refuses what the kind cannot take before anything is stored; for a new message
    the skeleton then supersedes what it replaces (agent/runs/supersede.py); `prepare` reads
    what the run needs (nothing is shown or run yet); `execute` runs it under the run's deadline
    (`deadline_s`) and lease; `stop(reason)` closes what is open when the run ends early: the
    person's stop (CANCELLED), the deadline (DEADLINE), a lost lease (CONVERSATION_BUSY,
    CONVERSATION_ARCHIVED) or the daily budget (USAGE_LIMIT); `result` is what the run produced
    (agent/runs/result.py), which the skeleton writes.
    """

    @property
    def supersedes_at_once(self) -> bool:
        """A waiting workflow step is cancelled before `prepare` rather than deferred."""

    @property
    def out_of_time(self) -> str | None:
        """The turn's error past the deadline; None for a kind whose `stop` shows it itself."""

    def deadline_s(self, run: Run) -> float: ...

    async def check(self, run: Run) -> None: ...

    async def prepare(self, run: Run, superseded: Superseded | None) -> None: ...

    async def execute(self, run: Run) -> None: ...

    async def stop(self, run: Run, reason: Code) -> None: ...

    def result(self, run: Run) -> RunResult: ...


class Services:
    """What the process shares between runs: settings, the backend client, the agent, the
    agent's model and tools (also used by workflow steps and diagnosis runs), and the starting
    runs' slots."""

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
    """One run under the conversation's lease, as a kind sees it."""

    def __init__(
        self,
        services: Services,
        *,
        show: Show,
        context: Context,
        submit: inputs.Submit,
        lease: Lease,
        callbacks: Sequence[BaseCallbackHandler] = (),
        writing: bool = False,
    ) -> None:
        self.services = services
        self.show = show  # what a kind shows in the turn (agent/stream/show.py)
        self.context = context
        self.submit = submit
        self.lease = lease
        self.history = History(services.client, context, writing=writing)
        self.callbacks = list(callbacks)
        self.config: RunnableConfig = {
            "configurable": {"thread_id": context.conversation_id},
            "recursion_limit": recursion_limit(services.settings),
            "callbacks": self.callbacks,
        }

    @property
    def settings(self) -> Settings:
        return self.services.settings

    @property
    def client(self) -> BackendClient:
        return self.services.client

    @property
    def agent(self) -> Agent:
        return self.services.agent

    @property
    def model(self) -> BaseChatModel:
        return self.services.model

    @property
    def tools(self) -> Mapping[str, BaseTool]:
        return self.services.tools

    def config_with(self, *handlers: BaseCallbackHandler) -> RunnableConfig:
        """The run's config with callback handlers of one step of its own added."""
        return {**self.config, "callbacks": [*self.callbacks, *handlers]}

    # -- the lease and the deadline: the one reading of a lost lease --------------------------

    def lost(self) -> LeaseLost | None:
        """Why the run may not go on, if so: the conversation was archived under it, or another
        run took its lease. The one reading of a lost lease (`check`, `lease_gone`)."""
        if self.lease.archived:
            code = Code.CONVERSATION_ARCHIVED
        elif self.lease.lost:
            code = Code.CONVERSATION_BUSY
        else:
            return None
        return LeaseLost(LEASE_LOST[code], code=code)

    @property
    def lease_gone(self) -> bool:
        return self.lost() is not None

    def check(self) -> None:
        """Raise LeaseLost if the run may not go on (`lost`). Every kind calls it between its
        steps."""
        if (lost := self.lost()) is not None:
            raise lost

    @contextlib.asynccontextmanager
    async def running(self, seconds: float) -> AsyncIterator[None]:
        """The run's deadline , brought forward to now when the lease
        is found lost, so that a kind stops mid-step (a model's answer reaches the turn by
        callback, with no step of the kind's own in between). Out of the block comes the
        lease's error, as `check` raises it, or TimeoutError past the deadline. The skeleton
        runs every kind's `execute` in it."""
        try:
            async with within(seconds, self.lease.on_loss):
                yield
        except TimeoutError:
            self.check()
            raise


@contextlib.asynccontextmanager
async def within(seconds: float, on_loss: Any = None) -> AsyncIterator[None]:
    """A run's deadline: TimeoutError out of the block past `seconds`, or at once when
    `on_loss` (a lease's) calls back. The evaluation runner's cases run under it too."""
    async with asyncio.timeout(seconds) as deadline:
        if on_loss is None:
            yield
            return
        loop = asyncio.get_running_loop()

        def now() -> None:
            if not deadline.expired():
                deadline.reschedule(loop.time())

        with on_loss(now):
            yield
