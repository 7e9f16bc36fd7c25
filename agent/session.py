"""The part of one submit that runs under the conversation's lease: new message or resume,
stream, persist; on cancel or deadline, close open tool calls and keep the partial answer."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Coroutine, Mapping, Sequence
from typing import Any

from langchain.agents.middleware.model_call_limit import ModelCallLimitExceededError
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.errors import GraphRecursionError
from langgraph.types import Command, Durability, StreamMode
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_delay, wait_exponential

from agent import hitl, inputs, recall, resources
from agent.backend_client import BackendClient, BackendError, BackendUnreachable
from agent.checkpoints import StoreUnavailable
from agent.config import Settings
from agent.context import Context
from agent.debug.recorder import CallRecorder
from agent.debug.scrub import Scrubber
from agent.documents import DocumentError, PreparedAttachments, prepare_attachments, store
from agent.errors import AgentError
from agent.graph import Agent, recursion_limit
from agent.lease import Lease
from agent.middleware import LlmError
from agent.runs.hooks import RunHooks
from agent.stream import Turn, apply

log = logging.getLogger(__name__)
STREAM_MODES: list[StreamMode] = ["messages", "updates", "custom"]
SAVE_TIMEOUT_S = 5.0  # the debug record's write: the stream ends after it, so keep it short
# Each step's checkpoint is stored before the next step starts: a tool runs only once the model
# turn that called it is in Postgres, so a process killed mid-tool leaves a call that the next
# run closes as cancelled, never one that ran but was forgotten (bench/durability.py: cost).
DURABILITY: Durability = "sync"
PERSIST_WAIT_S = 30.0  # how long a history write waits for a backend that is restarting
STORE_UNAVAILABLE = ("BACKEND_UNAVAILABLE", "The conversation store is not answering; try again.")


class RunError(Exception):
    """Ends a submit with one stream `error` message."""

    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details


class Session:
    """The part of one submit that runs under the lease."""

    def __init__(
        self,
        *,
        settings: Settings,
        client: BackendClient,
        agent: Agent,
        turn: Turn,
        context: Context,
        submit: inputs.Submit,
        lease: Lease,
        model: BaseChatModel | None = None,
        tools: Mapping[str, BaseTool] | None = None,
        hooks: Sequence[RunHooks] = (),
    ) -> None:
        self.settings = settings
        self.hooks = tuple(hooks)
        self.model = model
        self.tools = dict(tools or {})
        self.client = client
        self.agent = agent
        self.turn = turn
        self.context = context
        self.submit = submit
        self.lease = lease
        self.recorder = CallRecorder()  # every model call of the turn, for its debug record
        self.config: RunnableConfig = {
            "configurable": {"thread_id": context.conversation_id},
            "recursion_limit": recursion_limit(settings),
            "callbacks": [self.recorder, *(c for h in self.hooks for c in h.callbacks())],
        }
        self.human: HumanMessage | None = None
        self.writes: list[asyncio.Task[Any]] = []
        self.deferred: list[Coroutine[Any, Any, Any]] = []
        self.resources = resources.PreparedResources()
        self.workflows_superseded = False  # set by a session that cancels them itself, first
        self.message_id: int | None = None  # the assistant history row of this turn, once saved

    async def append(self, role: str, content: str, metadata: dict[str, Any]) -> int | None:
        """Add a message to the conversation's history (audited by the backend); its id.

        A backend that cannot be reached (restarting) is waited for up to PERSIST_WAIT_S: the
        request was never sent, so sending it again cannot store the message twice.
        """
        path = f"/api/assistant/conversations/{self.context.conversation_id}/messages"
        body = {"role": role, "content": content, "metadata": metadata}
        retrying = AsyncRetrying(
            stop=stop_after_delay(PERSIST_WAIT_S),
            wait=wait_exponential(multiplier=0.2, max=2),
            retry=retry_if_exception_type(BackendUnreachable),
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    created = await self.client.call(self.context, "POST", path, json=body)
        except BackendError as exc:
            log.warning("could not persist a %s message: %s", role, exc)
            return None
        return int(created["id"])

    def append_later(self, role: str, content: str, metadata: dict[str, Any]) -> None:
        self.later(self.append(role, content, metadata))

    def later(self, write: Coroutine[Any, Any, Any]) -> None:
        """Persist in the background once the model answers; awaited before the turn is saved.

        Started after the first output rather than at once: under a burst of submits the
        backend's first round trips (check, lease) of every run then go first, so no one's
        first token waits behind the others' history writes.
        """
        self.deferred.append(write)

    def start_writes(self) -> None:
        """Start the writes `later` deferred (idempotent)."""
        self.writes.extend(asyncio.create_task(write) for write in self.deferred)
        self.deferred.clear()

    async def _save_question(
        self, metadata: dict[str, Any], attachments: PreparedAttachments
    ) -> None:
        message_id = await self.append("user", self.submit.text, metadata)
        await store.record(self.client, self.context, message_id=message_id, prepared=attachments)

    async def run(self) -> None:
        snapshot = await self.agent.aget_state(self.config)
        graph_input: Command[Any] | dict[str, Any]
        if self.submit.action:
            graph_input = await self._resume(snapshot)
        else:
            graph_input = await self._new_message(snapshot)
        try:
            await self._stream(graph_input)
        except asyncio.CancelledError:
            await asyncio.shield(self._stopped())
            raise
        finally:
            self.start_writes()
        await self._finish()

    async def _resume(self, snapshot: Any) -> Command[Any]:
        try:
            pending, command = hitl.resolve(
                snapshot, self.submit.action, self.submit.options.call_id
            )
        except hitl.ConfirmationError as exc:
            raise RunError(exc.code, exc.message) from exc
        self.append_later(**hitl.decision_record(pending, self.submit.action))
        if self.submit.action == "confirm":
            self.turn.tool_start(ToolCall(name=pending.tool, args=pending.args, id=pending.call_id))
        return command

    async def _new_message(self, snapshot: Any) -> dict[str, Any]:
        try:
            attachments = await prepare_attachments(self.submit.files, self.settings)
        except DocumentError as exc:
            raise RunError(exc.code, exc.message, exc.details) from exc
        waiting = hitl.pending_of(snapshot)
        closing = hitl.closing_messages(snapshot, reason="rejected" if waiting else "cancelled")
        if not hitl.has_checkpoint(snapshot):  # new, or cleared by retention: start from history
            closing = [*await recall.earlier_messages(self.client, self.context), *closing]
        for pending in waiting:
            record = hitl.decision_record(pending, "reject", reason="superseded by a new message")
            self.append_later(**record)
        metadata: dict[str, Any] = {}
        if attachments.documents:
            metadata["attachments"] = attachments.metadata()
        if self.submit.truncated:
            metadata["truncated"] = True
            self.turn.notice(
                "TRUNCATED",
                f"Your message was longer than {self.settings.agent.max_message_chars:,} "
                "characters and was cut.",
            )
        for notice in attachments.notices:
            self.turn.notice(notice.code, notice.message, notice.details)
        self.resources = await self._read_resources(attachments)
        if self.resources.record:
            metadata["resources"] = self.resources.record
        if self.submit.mode != "dynamic":
            metadata["mode"] = self.submit.mode
        for item in self.resources.notices:
            self.turn.notice(item.code, item.message, item.details)
        text = "\n\n".join(p for p in (self.submit.text, self.resources.content()) if p)
        content = attachments.content(text)
        retried = None if waiting else unanswered_question(snapshot, content)
        # The same question again after a turn that never answered it (its process died, or
        # it failed or was stopped before any text): the thread keeps it once, under its id.
        self.human = retried or HumanMessage(content=content, id=str(uuid.uuid4()))
        if not self.workflows_superseded:
            self.later(self._supersede_workflows())
        if retried is None or not await self._question_saved():
            self.later(self._save_question(metadata, attachments))
        return {"messages": [*closing, self.human]}

    async def _question_saved(self) -> bool:
        """Whether the history's last question is this submit's text (saved by the turn that
        did not answer it), so a retry adds no second user row."""
        path = f"/api/assistant/conversations/{self.context.conversation_id}/history"
        try:
            body = await self.client.call(self.context, "GET", path, params={"limit": 10})
        except BackendError as exc:
            log.warning("could not read the history before a retry: %s", exc)
            return False
        questions = [m for m in body.get("items", []) if m.get("role") == "user"]
        return bool(questions) and questions[-1].get("content") == self.submit.text

    async def _read_resources(
        self, attachments: PreparedAttachments
    ) -> resources.PreparedResources:
        """The selected files and tables, read as the user, within their share of the input."""
        used = resources.tokens_of((self.submit.text, *attachments.blocks))
        cap = resources.cap(self.settings, used)
        return await resources.prepare(
            self.client, self.context, self.submit.options.resources, cap_tokens=cap
        )

    async def _supersede_workflows(self) -> None:
        """A new message cancels a workflow step waiting for confirmation (as it rejects a
        pending agent call), recorded as a rejection in the history."""
        path = f"/api/workflow/conversations/{self.context.conversation_id}/executions"
        try:
            body = await self.client.call(self.context, "POST", path + "/cancel-waiting")
        except BackendError as exc:
            log.warning("could not cancel waiting workflows: %s", exc)
            return
        for execution in body.get("items", []):
            pending = hitl.Pending.from_record(execution.get("pending") or {})
            if pending is not None:
                record = hitl.decision_record(
                    pending, "reject", reason="superseded by a new message"
                )
                await self.append(**record)

    async def _stream(self, graph_input: Any) -> None:
        pending: list[hitl.Pending] = []
        try:
            async with asyncio.timeout(self.settings.agent.run_deadline_s):
                async for mode, data in self.agent.astream(
                    graph_input,
                    self.config,
                    context=self.context,
                    stream_mode=STREAM_MODES,
                    durability=DURABILITY,
                ):
                    pending.extend(apply(self.turn, mode, data))
                    if self.deferred and _answering(mode, data):
                        self.start_writes()
                    if self.lease.archived:
                        message = "This conversation was archived during the reply."
                        raise RunError("CONVERSATION_ARCHIVED", message)
                    if self.lease.lost:
                        raise RunError("CONVERSATION_BUSY", "Another run took this conversation.")
        except LlmError as exc:
            self.turn.error("LLM_ERROR", str(exc))
        except StoreUnavailable:
            self.turn.error(*STORE_UNAVAILABLE)
        except (ModelCallLimitExceededError, GraphRecursionError):
            self.turn.error("BUDGET_EXHAUSTED", "This request used up its model-call budget.")
        except AgentError as exc:  # e.g. UsageLimit between two model calls: keep what was said
            await self._close_open_calls()
            self.turn.error(exc.code, exc.message, exc.details or None)
        except TimeoutError:
            await self._close_open_calls()
            self.turn.error("BUDGET_EXHAUSTED", "This request ran out of time.")
        if pending:
            self.turn.confirm(pending[0])

    async def _close_open_calls(self) -> None:
        """Give every open tool call a 'cancelled' result and keep the partial answer.

        Order matters: results close the last AI turn; the question, if the run stopped before
        it was stored, comes after them (as in the input); the partial answer comes last.
        """
        snapshot = await self.agent.aget_state(self.config)
        messages = hitl.closing_messages(snapshot, reason="cancelled")
        for message in messages:
            if isinstance(message, ToolMessage) and self.turn.is_open(message.tool_call_id):
                self.turn.tool_result(message)
        stored = {m.id for m in (snapshot.values or {}).get("messages", [])}
        if self.human is not None and self.human.id not in stored:
            messages.append(self.human)
        if partial := self.turn.open_text():
            messages.append(AIMessage(content=partial, id=str(uuid.uuid4())))
        if messages:
            node = "tools" if any(isinstance(m, ToolMessage) for m in messages) else "model"
            await self.agent.aupdate_state(self.config, {"messages": messages}, as_node=node)

    async def _stopped(self) -> None:
        try:
            await self._close_open_calls()
        except Exception:
            log.exception("could not close the stopped run of %s", self.context.conversation_id)
        await self._finish()

    def record(self) -> tuple[str, dict[str, Any]]:
        """(content, metadata) of the assistant history row of this turn."""
        return self.turn.record()

    async def _finish(self) -> None:
        """Persist the turn after the messages written before it."""
        self.start_writes()
        if self.writes:
            await asyncio.gather(*self.writes)
        if self.turn.entries:
            content, metadata = self.record()
            self.message_id = await self.append("assistant", content, metadata)
        if self.message_id is not None:
            self.turn.identify(self.message_id)  # the final value shows it before the write
            await self._save_calls(self.message_id)

    async def _save_calls(self, message_id: int) -> None:
        """Write the turn's debug record (one request); a failure is logged, never shown."""
        settings = self.settings
        scrub = Scrubber(
            (
                *(s.get_secret_value() for s in (settings.llm_api_key, settings.jwt_secret) if s),
                *(s.get_secret_value() for s in (settings.agent_client_secret,) if s),
                self.context.user_token,
                self.client.current_service_token(),
            )
        )
        try:
            body = self.recorder.record(scrub)
            path = f"/api/debug/{message_id}"
            await self.client.call(self.context, "PUT", path, json=body, timeout=SAVE_TIMEOUT_S)
        except BackendError as exc:
            log.warning("could not store the debug record of message %s: %s", message_id, exc)


def unanswered_question(snapshot: Any, content: Any) -> HumanMessage | None:
    """The thread's last question when it equals `content` and nothing answered it: no model
    text came after it, only tool calls and their results (a turn cut short)."""
    for message in reversed((snapshot.values or {}).get("messages", [])):
        if isinstance(message, HumanMessage):
            return message if message.content == content else None
        if isinstance(message, AIMessage) and message.text and not message.tool_calls:
            return None
    return None


def _answering(mode: str, data: Any) -> bool:
    """Whether a stream event shows the model's answer (a token, a model or tool step)."""
    if mode == "messages":
        return True
    return mode == "updates" and isinstance(data, dict) and bool({"model", "tools"} & data.keys())
