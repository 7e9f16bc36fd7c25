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
from collections.abc import AsyncIterator, Mapping
from typing import Any

from agent import inputs
from agent.auth import AuthError, bearer_token, verify_user
from agent.backend_client import BackendClient, BackendError
from agent.config import Settings
from agent.context import Context
from agent.graph import Agent
from agent.lease import Busy, Lease
from agent.session import RunError, Session
from agent.stream import Turn, updates

log = logging.getLogger(__name__)


class Runner:
    """Serves submits for one process: shared settings, backend client and compiled agent."""

    def __init__(self, *, settings: Settings, client: BackendClient, agent: Agent) -> None:
        self.settings = settings
        self.client = client
        self.agent = agent

    async def chat(
        self,
        message: Any,
        conversation_id: Any,
        action: Any,
        focus: Any,
        headers: Mapping[str, str],
    ) -> AsyncIterator[list[dict[str, Any]]]:
        """Stream this turn's assistant messages (CONTRACT.md stream protocol)."""
        turn = Turn(thread_id=str(conversation_id or ""))
        task = asyncio.create_task(
            self._run(turn, message, conversation_id, action, focus, headers)
        )
        try:
            async for snapshot in updates(turn):
                yield snapshot
        finally:
            if not task.done():
                task.cancel()
            # Let the run clean up (close tool calls, persist, release) even while we are being
            # cancelled ourselves; a second cancel leaves it finishing in the background.
            await asyncio.shield(asyncio.wait({task}))

    async def _run(self, turn: Turn, *args: Any) -> None:
        try:
            await self._serve(turn, *args)
        except RunError as exc:
            turn.error(exc.code, exc.message, exc.details)
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
                max_chars=self.settings.agent.max_message_chars,
            )
        except inputs.InputError as exc:
            raise RunError(exc.code, exc.message) from exc
        context = Context(
            user_token=user.token,
            user_id=user.user_id,
            username=user.username,
            roles=user.roles,
            conversation_id=submit.conversation_id,
            focus=submit.focus,
        )
        lease = await self._check_and_lease(context, submit)
        try:
            await Session(
                settings=self.settings,
                client=self.client,
                agent=self.agent,
                turn=turn,
                context=context,
                submit=submit,
                lease=lease,
            ).run()
        finally:
            await asyncio.shield(lease.release())

    async def _check_and_lease(self, context: Context, submit: inputs.Submit) -> Lease:
        """Check the conversation and take its lease at once (two round trips in parallel);
        a lease taken for a conversation that fails the check is given back."""
        lease = Lease(self.client, context, ttl_s=self.settings.agent.lease_ttl_s)
        check = asyncio.ensure_future(self._check_conversation(context, submit))
        take = asyncio.ensure_future(self._take(lease, submit))
        try:
            await check  # its error (NOT_FOUND, archived...) wins over the lease's
            await take
        except BaseException:
            check.cancel()
            await asyncio.shield(_give_back(lease, take))
            raise
        return lease

    async def _take(self, lease: Lease, submit: inputs.Submit) -> None:
        """Take the lease; a decision waits up to confirm_wait_s for it (FR-026)."""
        try:
            await lease.acquire(wait_s=self.settings.agent.confirm_wait_s if submit.action else 0)
        except Busy as exc:
            message = "This conversation is busy with another run."
            raise RunError("CONVERSATION_BUSY", message) from exc

    async def _check_conversation(self, context: Context, submit: inputs.Submit) -> None:
        path = f"/api/assistant/conversations/{context.conversation_id}"
        try:
            conversation = await self.client.call(context, "GET", path)
        except BackendError as exc:
            if exc.status in (404, 422):
                raise RunError("NOT_FOUND", "Conversation not found.") from exc
            if exc.status == 401:
                raise RunError("UNAUTHORIZED", exc.message) from exc
            raise RunError(
                "BACKEND_UNAVAILABLE", "The platform is not answering; try again."
            ) from exc
        if conversation.get("is_archived"):
            if submit.action:
                raise RunError("CHECKPOINT_EXPIRED", "This conversation was archived.")
            raise RunError(
                "CONVERSATION_ARCHIVED", "This conversation is archived; restore it first."
            )


async def _give_back(lease: Lease, take: asyncio.Future[None]) -> None:
    """Release the lease of a submit that will not run, once its request has landed."""
    with contextlib.suppress(BaseException):
        await take  # not cancelled: a PUT already sent would otherwise hold it until expiry
    if not take.cancelled() and take.exception() is None:
        await lease.release()
