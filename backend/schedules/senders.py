"""The two channels: email over SMTP (aiosmtplib) and a signed JSON webhook (Slack-compatible
`text`) to an allowed host only, never following a redirect elsewhere."""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from email.message import EmailMessage
from typing import Any

import aiosmtplib
import httpx

from backend.config import Settings
from backend.schedules import targets


class SendError(Exception):
    """One attempt failed; the message (bounded, no secrets) is kept on the delivery row."""


@dataclass(frozen=True)
class Note:
    """What a notification says about one run."""

    schedule_id: str
    schedule_name: str
    run_id: str
    status: str
    conversation_id: str | None
    message_id: int | None
    answer: str

    @property
    def text(self) -> str:
        head = f"{self.schedule_name}: {self.status}"
        return f"{head}\n\n{self.answer}" if self.answer else head

    def body(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "schedule": {"id": self.schedule_id, "name": self.schedule_name},
            "run": {
                "run_id": self.run_id,
                "status": self.status,
                "conversation_id": self.conversation_id,
                "message_id": self.message_id,
            },
        }


def signature(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


async def send(channel: str, note: Note, notify: dict[str, Any], settings: Settings) -> None:
    if channel == "email":
        await _email(note, list(notify.get("email") or []), settings)
    else:
        await _webhook(note, str(notify.get("webhook") or ""), settings)


async def _email(note: Note, to: list[str], settings: Settings) -> None:
    smtp = settings.smtp
    if not smtp.host:
        raise SendError("SMTP__HOST is not set")
    message = EmailMessage()
    message["From"] = smtp.sender
    message["To"] = ", ".join(to)
    message["Subject"] = f"[agent-chat] {note.schedule_name}: {note.status}"
    message.set_content(note.text)
    try:
        await aiosmtplib.send(
            message,
            hostname=smtp.host,
            port=smtp.port,
            username=smtp.username,
            password=smtp.password.get_secret_value() if smtp.password else None,
            start_tls=smtp.starttls,
            timeout=settings.schedules.delivery_timeout_s,
        )
    except (aiosmtplib.SMTPException, OSError) as exc:
        raise SendError(f"SMTP: {type(exc).__name__}") from exc


async def _webhook(note: Note, url: str, settings: Settings) -> None:
    schedules = settings.schedules
    try:  # checked again at each send: the allow-list may have shrunk since creation
        targets.check_webhook(url, schedules.allowed_hosts)
    except targets.TargetError as exc:
        raise SendError(str(exc)) from exc
    if schedules.webhook_secret is None:
        raise SendError("SCHEDULES__WEBHOOK_SECRET is not set")
    body = json.dumps(note.body(), separators=(",", ":")).encode()
    headers = {
        "Content-Type": "application/json",
        "X-Signature": signature(schedules.webhook_secret.get_secret_value(), body),
    }
    try:
        async with httpx.AsyncClient(
            timeout=schedules.delivery_timeout_s, follow_redirects=False, trust_env=False
        ) as client:
            response = await client.post(url, content=body, headers=headers)
    except httpx.HTTPError as exc:
        raise SendError(f"webhook: {type(exc).__name__}") from exc
    if not 200 <= response.status_code < 300:
        raise SendError(f"webhook: HTTP {response.status_code}")
