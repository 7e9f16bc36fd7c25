"""One submit, end to end: verify the user -> check the conversation -> take the lease ->
new message or resume -> stream -> persist -> release.

The agent runs in its own task and writes into a `Turn`; the Gradio generator only watches the
turn. Cancelling the generator (Gradio's cancel, a closed stream) cancels the run task, which
then closes open tool calls, keeps the partial answer and releases the lease before it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver

from agent import inputs, modes
from agent.auth import AuthError, bearer_token, verify_user
from agent.backend_client import BackendClient, BackendError
from agent.checkpoints import StoreUnavailable
from agent.config import Settings
from agent.context import Context
from agent.errors import AgentError, Code
from agent.graph import Agent
from agent.lease import Busy, Lease
from agent.runs.cancel import Cancels
from agent.runs.hooks import HookFactory, Outcome, RunHooks, RunInfo
from agent.runs.live import LiveHook, LiveRuns
from agent.runs.viewers import Viewers
from agent.session import STORE_UNAVAILABLE, RunError, Session
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
        model: BaseChatModel | None = None,
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
        self.hooks = (live, *hooks)  # then usage, metrics, traces (agent/runs/hooks.py)
        self.client = client
        self.agent = agent
        self.model = model  # the agent's model, also used by workflow llm_call steps
        self.tools = {t.name: t for t in tools}  # the agent's tools, also run by workflow steps

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
            user = verify_user(self.settings, bearer_token(headers))
            submit = inputs.parse(
                message, conversation_id, action, "", "", max_chars=1, default_mode="dynamic"
            )
        except AuthError as exc:
            turn.error(Code.UNAUTHORIZED, exc.message)
            yield turn.snapshot()
            return
        except inputs.InputError as exc:
            turn.error(exc.code, exc.message)
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
        except RunError as exc:
            turn.error(exc.code, exc.message, exc.details)
        except AgentError as exc:
            turn.error(exc.code, exc.message, exc.details or None)
        except StoreUnavailable:
            turn.error(*STORE_UNAVAILABLE)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("run failed for conversation %s", turn.thread_id)
            turn.error("INTERNAL_ERROR", "Something went wrong on our side; please try again.")
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
        try:
            user = verify_user(self.settings, bearer_token(headers))
        except AuthError as exc:
            raise RunError("UNAUTHORIZED", exc.message) from exc
        try:
            submit = inputs.parse(
                message,
                conversation_id,
                action,
                focus,
                options,
                max_chars=self.settings.agent.max_message_chars,
                default_mode=self.settings.workflow.mode,
            )
        except inputs.InputError as exc:
            raise RunError(exc.code, exc.message) from exc
        session_type = modes.session_for(submit.mode, action=submit.action)
        if session_type is None:
            raise RunError("INVALID_INPUT", f"The mode {submit.mode!r} is not available.")
        context = Context(
            user_token=user.token,
            user_id=user.user_id,
            username=user.username,
            roles=user.roles,
            conversation_id=submit.conversation_id,
            focus=submit.focus,
        )
        info = RunInfo(
            run_id=uuid.uuid4().hex,
            mode=submit.mode,
            action=submit.action,
            context=context,
            headers=headers,
            turn=turn,
        )
        hooks = [factory(info) for factory in self.hooks]
        with contextlib.ExitStack() as stack:
            for hook in hooks:
                stack.enter_context(hook.around())
            for hook in hooks:
                turn.on_first_output.append(hook.first_output)
            await self._leased(turn, context, submit, session_type, hooks)

    async def _leased(
        self,
        turn: Turn,
        context: Context,
        submit: inputs.Submit,
        session_type: type[Session],
        hooks: Sequence[RunHooks],
    ) -> None:
        try:
            lease = await self._check_and_lease(context, submit, run_id=hooks_run_id(hooks))
        except BaseException as exc:
            _finished(hooks, _outcome(turn, exc), turn)
            raise
        failure: BaseException | None = None
        try:
            for hook in hooks:
                await hook.started(lease.grant)
            await session_type(
                settings=self.settings,
                client=self.client,
                agent=self.agent,
                turn=turn,
                context=context,
                submit=submit,
                lease=lease,
                model=self.model,
                tools=self.tools,
                hooks=hooks,
            ).run()
        except BaseException as exc:
            failure = exc
            raise
        finally:
            _finished(hooks, _outcome(turn, failure), turn)
            for hook in hooks:
                try:
                    await asyncio.shield(hook.flush())
                except Exception:
                    log.exception("a run hook failed to flush")
            await asyncio.shield(lease.release())
            if lease.archived:
                await asyncio.shield(self._delete_thread(context.conversation_id))

    async def _delete_thread(self, thread_id: str) -> None:
        """Delete the thread of a conversation archived while this run had stalled past its
        lease: the archive deleted the thread before this run's last checkpoints (FR-029)."""
        saver = self.agent.checkpointer
        if isinstance(saver, BaseCheckpointSaver):
            await saver.adelete_thread(thread_id)

    async def _check_and_lease(
        self, context: Context, submit: inputs.Submit, *, run_id: str | None = None
    ) -> Lease:
        """Take the conversation's lease; the backend checks ownership in the same call (someone
        else's conversation is 404) and refuses an archived one, so a run needs one round trip
        before its first model call."""
        lease = Lease(
            self.client,
            context,
            ttl_s=self.settings.agent.lease_ttl_s,
            run_id=run_id,
            owner_url=self.settings.agent.advertise_url,
        )
        try:
            await lease.acquire(wait_s=self.settings.agent.confirm_wait_s if submit.action else 0)
        except Busy as exc:
            message = "This conversation is busy with another run."
            raise RunError("CONVERSATION_BUSY", message) from exc
        except BackendError as exc:
            if exc.code == "CONVERSATION_ARCHIVED":
                if submit.action:
                    raise RunError("CHECKPOINT_EXPIRED", "This conversation was archived.") from exc
                raise RunError(
                    "CONVERSATION_ARCHIVED", "This conversation is archived; restore it first."
                ) from exc
            if exc.status in (404, 422):
                raise RunError("NOT_FOUND", "Conversation not found.") from exc
            if exc.status == 401:
                raise RunError("UNAUTHORIZED", exc.message) from exc
            raise RunError(
                "BACKEND_UNAVAILABLE", "The platform is not answering; try again."
            ) from exc
        return lease


def hooks_run_id(hooks: Sequence[RunHooks]) -> str | None:
    return hooks[0].info.run_id if hooks else None


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
