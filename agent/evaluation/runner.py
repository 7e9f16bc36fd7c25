"""Running the cases: each one a fresh conversation through the real agent graph (the
configured model, the real tools over HTTP, the confirmation middleware), recording the tools
the model chose in that turn.

- A confirmation ends the case: the pending call counts as chosen and is never resumed.
- Write tools without a confirmation (create_branch) get a synthetic result (sandbox.py).
- Threads live in an in-memory checkpointer and are deleted after their case: an evaluation
  creates no conversation, no history row and no checkpoint in the platform's database.
- A model failure, an exhausted budget or the run deadline fails that case with the reason, as
  a person's turn shows it ("CODE: message"): the same answer path (agent/runs/answer.py).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver

from agent import hitl
from agent.backend_client import BackendClient
from agent.config import Settings
from agent.context import Context, Spent
from agent.errors import BudgetExhausted, Code
from agent.evaluation.cases import CaseTurn, NumberedCase
from agent.evaluation.identity import check_service, sign_in
from agent.evaluation.sandbox import DryRunWrites
from agent.external.middleware import ExternalTools
from agent.external.servers import ExternalServers
from agent.graph import Agent, build_agent, build_model, close_model, recursion_limit
from agent.hooks import RunInfo
from agent.runs import answer
from agent.runs.state import within
from agent.stream import Show, Turn
from agent.tools.registry import build_tools
from agent.usage import UsageHooks

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CaseOutcome:
    """What the agent did for one case."""

    numbered: NumberedCase
    called: tuple[str, ...]  # tool names in the order the model called them (repeats kept)
    confirm: tuple[str, ...] = ()  # of those, the calls left waiting for a confirmation
    error: str | None = None  # why the turn did not finish ("CODE: message")

    @property
    def passed(self) -> bool:
        """Exactly the expected tools, compared as sets, and a turn that finished."""
        expected = set(self.numbered.case.expected_tools)
        return self.error is None and set(self.called) == expected


def history_messages(turns: Sequence[CaseTurn]) -> list[BaseMessage]:
    """A case's earlier turns as the agent's messages."""
    return [
        HumanMessage(content=t.content, id=str(uuid.uuid4()))
        if t.role == "user"
        else AIMessage(content=t.content, id=str(uuid.uuid4()))
        for t in turns
    ]


def tools_called(messages: Sequence[BaseMessage], after_id: str) -> tuple[str, ...]:
    """The names of the tool calls of every AI message after the message `after_id`."""
    ids = [m.id for m in messages]
    start = ids.index(after_id) + 1 if after_id in ids else len(messages)
    return tuple(
        call["name"]
        for message in messages[start:]
        if isinstance(message, AIMessage)
        for call in message.tool_calls
    )


def _first_error(show: Show) -> str | None:
    """The turn's first error message as "CODE: message" (the stream's own code and text)."""
    _, metadata = show.record()
    for part in metadata["parts"]:
        shown = part["metadata"]
        if shown.get("type") == "error":
            return f"{shown['code']}: {shown['message']}"
    return None


class Evaluator:
    """Runs cases against one compiled agent as one signed-in user."""

    def __init__(
        self,
        *,
        settings: Settings,
        agent: Agent,
        checkpointer: InMemorySaver,
        user: Context,
        client: BackendClient | None = None,
    ) -> None:
        self.settings = settings
        self.agent = agent
        self.checkpointer = checkpointer
        self.user = user
        self.client = client  # where the cases' model calls are recorded (marked evaluation)

    async def run_case(self, numbered: NumberedCase) -> CaseOutcome:
        """One case as a fresh conversation; its thread is deleted afterwards."""
        case = numbered.case
        thread = str(uuid.uuid4())
        config: RunnableConfig = {
            "configurable": {"thread_id": thread},
            "recursion_limit": recursion_limit(self.settings),
        }
        context = replace(self.user, conversation_id=thread, focus=case.focus, spent=Spent())
        usage = self._usage(context)
        if usage is not None:
            config["callbacks"] = list(usage.callbacks())
        question_id = str(uuid.uuid4())
        question = HumanMessage(content=case.query, id=question_id)
        graph_input = {"messages": [*history_messages(case.history), question]}
        try:
            error = await self._stream(graph_input, config, context)
            snapshot = await self.agent.aget_state(config)
        finally:
            await self.checkpointer.adelete_thread(thread)
            if usage is not None:
                await usage.flush()
        messages = list((snapshot.values or {}).get("messages", []))
        return CaseOutcome(
            numbered=numbered,
            called=tools_called(messages, question_id),
            confirm=tuple(p.tool for p in hitl.pending_of(snapshot)),
            error=error,
        )

    def _usage(self, context: Context) -> UsageHooks | None:
        """The usage hook of one case: its calls are recorded as an evaluation's."""
        if self.client is None:
            return None
        info = RunInfo(
            run_id=uuid.uuid4().hex, mode="dynamic", action="", context=context, evaluation=True
        )
        return UsageHooks(info, self.client)

    async def _stream(
        self, graph_input: dict[str, Any], config: RunnableConfig, context: Context
    ) -> str | None:
        """Run the turn to its end or its first confirmation, on a person's answer path
        (agent/runs/answer.py: its budgets, deadline and codes); why it failed ("CODE:
        message"), if so."""
        show = Show(Turn(thread_id=context.conversation_id))
        try:
            async with within(answer.deadline_s(self.settings)):
                await answer.stream(self.agent, graph_input, config, context=context, show=show)
        except TimeoutError:
            show.fail(BudgetExhausted(answer.OUT_OF_TIME))
        except Exception as exc:
            # As a chat run does (agent/run.py): our bug in one case must not end the others.
            log.exception("evaluation case failed")
            return f"{Code.INTERNAL_ERROR}: {type(exc).__name__}"
        return _first_error(show)

    async def run_all(
        self,
        cases: Sequence[NumberedCase],
        *,
        concurrency: int,
        on_done: Callable[[CaseOutcome], None] = lambda outcome: None,
    ) -> list[CaseOutcome]:
        """Every case, at most `concurrency` at a time; outcomes in the cases' order."""
        slots = asyncio.Semaphore(concurrency)

        async def one(numbered: NumberedCase) -> CaseOutcome:
            async with slots:
                outcome = await self.run_case(numbered)
            on_done(outcome)
            return outcome

        return list(await asyncio.gather(*(one(c) for c in cases)))


async def evaluate(
    settings: Settings,
    cases: Sequence[NumberedCase],
    *,
    username: str,
    password: str,
    concurrency: int,
    model: BaseChatModel | None = None,
    on_done: Callable[[CaseOutcome], None] = lambda outcome: None,
) -> list[CaseOutcome]:
    """Sign in, build the agent (`model`, else the configured one) and run every case."""
    user = await sign_in(settings, username=username, password=password)
    client = BackendClient(settings)
    built = model or build_model(settings)
    try:
        await check_service(client)
        checkpointer = InMemorySaver()
        agent = build_agent(
            settings,
            model=built,
            tools=build_tools(client),
            checkpointer=checkpointer,
            guards=[DryRunWrites()],
            # The admin's external MCP tools are offered as in a chat (those that ask first
            # end the case at their confirmation, like deploy_dashboard).
            external=ExternalTools(
                ExternalServers(client, settings.mcp_key, settings.agent.mcp_refresh_s),
                client,
                settings.agent.mcp_timeout_s,
                budget_chars=settings.agent.external_tools_budget_chars,
                description_chars=settings.agent.tool_description_chars,
            ),
        )
        evaluator = Evaluator(
            settings=settings, agent=agent, checkpointer=checkpointer, user=user, client=client
        )
        return await evaluator.run_all(cases, concurrency=concurrency, on_done=on_done)
    finally:
        if model is None:
            await close_model(built)
        await client.aclose()
