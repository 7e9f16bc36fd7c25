"""One submit, end to end: verify the user -> parse the input -> the run skeleton
(agent/runs/skeleton.py: lease, hooks, the kind routing picks, persist, release).

The agent runs in its own task and writes into a `Turn`; the Gradio generator only watches the
turn. The run is its conversation's (CONTRACT.md, "Runs outlive the page"): a viewer that goes
away leaves it running; an explicit stop (`action: "stop"`, or Gradio's cancel of the job that
started it) cancels the run task, which then closes open tool calls, keeps the partial answer
and releases the lease before it ends. `attach` and `stop` are served by agent/runs/viewers.py.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool

from agent import inputs, language
from agent.access_tokens import token_checker
from agent.auth import bearer_token, verify_caller
from agent.backend_client import BackendClient
from agent.config import Settings
from agent.context import Context
from agent.errors import AgentError
from agent.graph import Agent
from agent.hooks import HookFactory, RunInfo
from agent.runs import routing, skeleton, state
from agent.runs.cancel import Cancels
from agent.runs.live import LiveHook, LiveRuns
from agent.runs.viewers import Viewers
from agent.stream import Turn, updates

log = logging.getLogger(__name__)


class Runner:
    """Serves submits for one process: shared settings, backend client and compiled agent."""

    def __init__(
        self,
        *,
        settings: Settings,
        client: BackendClient,
        agent: Agent,
        model: BaseChatModel,
        tools: Sequence[BaseTool] = (),
        hooks: Sequence[HookFactory] = (),
        cancels: Cancels | None = None,
    ) -> None:
        self.settings = settings
        self.live = LiveRuns()  # the runs this process owns (agent/runs/live.py)
        self.cancels = cancels or Cancels()  # sessions whose job a person cancelled
        self.viewers = Viewers(
            runs=self.live,
            client=client,
            own_url=settings.agent.advertise_url,
            lease_ttl_s=settings.agent.lease_ttl_s,
        )
        live: HookFactory = lambda info: LiveHook(info, self.live)  # noqa: E731
        self.hooks = (live, *hooks)  # then usage, metrics, traces (agent/hooks.py)
        self.client = client
        self.check_token = token_checker(lambda: self.client)  # personal access tokens
        self.tools = {t.name: t for t in tools}  # the agent's tools, also run by workflow steps
        self.services = state.Services(
            settings=settings, client=client, agent=agent, model=model, tools=self.tools
        )

    async def chat(
        self,
        message: Any,
        conversation_id: Any,
        action: Any,
        focus: Any,
        options: Any,
        headers: Mapping[str, str],
        session: str | None = None,
    ) -> AsyncIterator[list[dict[str, Any]]]:
        """Stream this turn's assistant messages (CONTRACT.md stream protocol).

        The run is its conversation's, not this stream's: a viewer that goes away (a reload,
        a closed tab, a lost network) leaves it running to its end, stored as if watched.
        Only an explicit stop ends it early: `action: "stop"`, or Gradio's cancel of the job
        that started it (`session` is that job's Gradio session).
        """
        if isinstance(action, str) and action.strip() in inputs.WATCH_ACTIONS:
            async for snapshot in self._watch(message, conversation_id, action, headers):
                yield snapshot
            return
        turn = Turn(thread_id=str(conversation_id or ""))
        task = asyncio.create_task(
            self._run(turn, message, conversation_id, action, focus, options, headers)
        )
        self.live.keep(task)
        try:
            async for snapshot in updates(turn):
                yield snapshot
        finally:
            if not task.done() and self.cancels.cancelled(session):
                task.cancel()
                # Let the run clean up (close tool calls, persist, release) even while we are
                # being cancelled ourselves; a second cancel leaves it finishing on its own.
                await asyncio.shield(asyncio.wait({task}))

    async def _watch(
        self, message: Any, conversation_id: Any, action: str, headers: Mapping[str, str]
    ) -> AsyncIterator[list[dict[str, Any]]]:
        """`attach` or `stop` the conversation's live run (agent/runs/viewers.py)."""
        turn = Turn(thread_id=str(conversation_id or ""))
        try:
            user = await verify_caller(self.settings, bearer_token(headers), self.check_token)
            submit = inputs.parse(
                message, conversation_id, action, "", "", max_chars=1, default_mode="dynamic"
            )
        except AgentError as exc:
            turn.fail(exc)
            yield turn.snapshot()
            return
        context = Context(
            user_token=user.token,
            user_id=user.user_id,
            username=user.username,
            roles=user.roles,
            conversation_id=submit.conversation_id,
        )
        if submit.action == "stop":
            yield await self.viewers.stop(context)
            return
        async for snapshot in self.viewers.attach(context):
            yield snapshot

    async def _run(self, turn: Turn, *args: Any) -> None:
        try:
            await self._serve(turn, *args)
        except AgentError as exc:
            turn.fail(exc)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("run failed for conversation %s", turn.thread_id)
            turn.fail(AgentError("Something went wrong on our side; please try again."))
        finally:
            turn.finish()

    async def _serve(
        self,
        turn: Turn,
        message: Any,
        conversation_id: Any,
        action: Any,
        focus: Any,
        options: Any,
        headers: Mapping[str, str],
    ) -> None:
        user = await verify_caller(self.settings, bearer_token(headers), self.check_token)
        submit = inputs.parse(
            message,
            conversation_id,
            action,
            focus,
            options,
            max_chars=self.settings.agent.max_message_chars,
            default_mode=self.settings.workflow.mode,
        )
        context = Context(
            user_token=user.token,
            user_id=user.user_id,
            username=user.username,
            roles=user.roles,
            conversation_id=submit.conversation_id,
            focus=submit.focus,
            lang=language.from_headers(headers),
        )
        info = RunInfo(
            run_id=uuid.uuid4().hex,
            mode=submit.mode,
            action=submit.action,
            context=context,
            headers=headers,
            turn=turn,
        )
        await skeleton.serve(
            self.services,
            turn=turn,
            context=context,
            submit=submit,
            hooks=[factory(info) for factory in self.hooks],
            route=routing.route,
            run_id=info.run_id,
        )
