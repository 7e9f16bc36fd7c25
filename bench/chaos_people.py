"""The simulated people of the chaos soak (bench/chaos.py): each logs in through the gateway and
sends turns of every kind over Gradio's HTTP API (plain, tool, confirmation then confirm or
reject, upload, workflow, diagnosis), sometimes drops its stream and re-attaches, and records
what it saw of each turn for the auditor (bench/chaos_audit.py). Bounded in turns and time."""

from __future__ import annotations

import json
import random
import re
import threading
import time
import traceback
import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx

from bench.chaos_gateway import Counting, Tally

GRADIO = "/api/agent/gradio"
MARKER = re.compile(r"M-[0-9a-f]{12}")
KINDS = {  # weight of each kind of turn
    "plain": 4,
    "tool": 3,
    "confirm": 2,
    "upload": 2,
    "workflow": 1,
    "diagnose": 1,
}
DROP_P = 0.15  # a turn whose person drops the stream after its first value, then re-attaches
NEW_CONVERSATION_P = 0.1  # a person leaves for a new conversation
STREAM_TIMEOUT_S = 120.0
EMPTY = {"text": "", "files": []}


def rules(dashboards: list[int]) -> list[dict[str, Any]]:
    """The scripted model's answers, by the kind word in the person's question."""
    draft = {
        "conclusion": None,
        "analysis": [],
        "action_plan": [],
        "recommendations": ["Look at the failing chart first"],
        "limitations": {"checked_scope": [], "missing_info": ["nothing was checked"]},
    }
    found = [
        {"match": "PLAINQ", "response": {"text": "A plain answer in a few words.", "delay_ms": 40}},
        {
            "match": "TOOLQ",
            "response": {
                "text": "Let me look.",
                "tool_calls": [{"name": "get_dashboard", "args": {"dashboard_id": dashboards[0]}}],
            },
        },
        {"match": "DIAGQ", "response": {"text": json.dumps(draft)}},
    ]
    for dashboard in dashboards:
        args = {"dashboard_id": dashboard, "ref": "main", "environment": "staging"}
        call = {"tool_calls": [{"name": "deploy_dashboard", "args": args}]}
        found.append({"match": f"DEPLOYQ-{dashboard} ", "response": call})
    return found


@dataclass
class Turn:
    """One submit as its person saw it."""

    person: int
    conversation: str
    kind: str  # plain, tool, confirm, upload, workflow, diagnose, decision, closing
    marker: str = ""  # in the question, the uploaded file and so every model request of it
    question: str = ""
    dashboard: int = 0
    decision: str = ""  # confirm or reject (kind decision)
    call_id: str = ""
    outcome: str = ""  # answer, confirm, error:CODE, notice:CODE, empty, gateway:STATUS
    cut: bool = False  # the stream broke (a process died) before its end
    dropped: bool = False  # the person dropped it on purpose
    attached: str = ""  # the outcome seen by re-attaching after a cut or a drop
    messages: list[dict[str, Any]] = field(default_factory=list)
    started: float = 0.0
    ended: float = 0.0

    @property
    def final(self) -> str:
        return self.attached or self.outcome


def outcome_of(value: list[dict[str, Any]]) -> str:
    kinds = [(m.get("metadata") or {}).get("type", "text") for m in value]
    for message in value:
        meta = message.get("metadata") or {}
        if meta.get("type") == "error":
            inner = (meta.get("details") or {}).get("code")  # a workflow's failed step's
            return f"error:{meta.get('code')}" + (f"/{inner}" if inner else "")
    if "confirm_required" in kinds:
        return "confirm"
    if any(k in ("text", "diagnosis", "workflow_step", "tool_end") for k in kinds):
        return "answer"
    notices = [m["metadata"].get("code") for m in value if m["metadata"].get("type") == "notice"]
    return f"notice:{notices[0]}" if notices else "empty"


class Person:
    """One person: a login, conversations, a bounded run of random turns."""

    def __init__(
        self,
        number: int,
        gateway: str,
        password: str,
        dashboard: int,
        seed: int,
        log: Any,
        tally: Tally | None = None,
    ) -> None:
        self.number = number
        self.gateway = gateway
        self.password = password
        self.dashboard = dashboard
        self.rng = random.Random(seed)
        self.log = log
        self.turns: list[Turn] = []
        self.conversations: list[str] = []
        self.token = ""
        # every answer through the gateway is counted (bench/chaos_gateway.py, invariant 8)
        self.tally = tally or Tally()
        self.http = httpx.Client(base_url=gateway, timeout=30, transport=Counting(self.tally))
        self.lock = threading.Lock()
        self.crash = ""  # a traceback of the soak's own code, if it failed

    # -- the platform, through the gateway --------------------------------------------------

    def _retrying(self, call: Any, wait_s: float = 180) -> Any:
        """A backend call the person would retry (login, new conversation) while faults run."""
        deadline = time.monotonic() + wait_s
        while True:
            try:
                answer = call()
                if answer.status_code < 500:
                    return answer
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the platform did not answer")
            time.sleep(1)

    def login(self) -> None:
        body = {"username": "admin", "password": self.password}
        answer = self._retrying(lambda: self.http.post("/api/auth/login", json=body))
        answer.raise_for_status()
        self.token = answer.json()["access_token"]
        self.http.headers["Authorization"] = f"Bearer {self.token}"

    def new_conversation(self) -> str:
        answer = self._retrying(lambda: self.http.post("/api/assistant/conversations", json={}))
        answer.raise_for_status()
        self.conversations.append(str(answer.json()["id"]))
        return self.conversations[-1]

    def upload(self, marker: str) -> str | None:
        body = f"name,value\n{marker},1\n".encode()
        try:
            answer = self.http.post(
                f"{GRADIO}/gradio_api/upload",
                files={"files": (f"{marker}.csv", body, "text/csv")},
            )
        except httpx.HTTPError:
            return None
        return str(answer.json()[0]) if answer.status_code == 200 else None

    # -- one submit ------------------------------------------------------------------------

    def _stream(self, data: list[Any], turn: Turn, *, drop: bool) -> list[dict[str, Any]] | None:
        """POST the call, read its event stream; the last value, or None when cut (a process
        died, or the person dropped it). `turn.outcome` says what the person saw."""
        try:
            started = self.http.post(f"{GRADIO}/gradio_api/call/chat", json={"data": data})
        except httpx.HTTPError:
            turn.outcome = "gateway:unreachable"
            return None
        if started.status_code != 200:
            turn.outcome = f"gateway:{started.status_code}"
            return None
        event_id = started.json()["event_id"]
        last: list[dict[str, Any]] | None = None
        event = ""
        try:
            with self.http.stream(
                "GET", f"{GRADIO}/gradio_api/call/chat/{event_id}", timeout=STREAM_TIMEOUT_S
            ) as response:
                if response.status_code != 200:
                    turn.outcome = f"gateway:{response.status_code}"
                    return None
                for line in response.iter_lines():
                    if line.startswith("event:"):
                        event = line.partition(":")[2].strip()
                    elif line.startswith("data:") and event in ("generating", "complete"):
                        payload = json.loads(line.partition(":")[2].strip() or "null")
                        if payload:
                            last = list(payload[0] or [])
                            if drop and event == "generating":
                                turn.dropped = True
                                return None
                        if event == "complete":
                            return last
                    elif line.startswith("data:") and event == "error":
                        said = line.partition(":")[2].strip()
                        turn.outcome = f"gradio-error:{said[:80]}"
                        # the job's process died and another agent answers its event id: the
                        # browser attaches again, and so does the person here
                        turn.cut = "404" in said
                        return None
        except (httpx.HTTPError, ValueError):  # cut, possibly mid-line
            pass
        turn.cut = True
        if last is not None:
            turn.messages = last
        return None

    def _attach(self, turn: Turn) -> None:
        """After a cut or a drop: watch the conversation's run until its end."""
        for _ in range(6):
            probe = Turn(self.number, turn.conversation, "attach")
            value = self._stream([EMPTY, turn.conversation, "attach", "", ""], probe, drop=False)
            if value is not None:
                turn.attached = outcome_of(value)
                turn.messages = value
                return
            time.sleep(1)
        turn.attached = probe.outcome or "lost"

    def submit(
        self, turn: Turn, message: dict[str, Any], *, action: str = "", **extra: Any
    ) -> Turn:
        focus = json.dumps(extra["focus"]) if extra.get("focus") else ""
        options = json.dumps(extra["options"]) if extra.get("options") else ""
        drop = self.rng.random() < DROP_P and turn.kind != "closing"
        turn.started = time.time()
        value = self._stream([message, turn.conversation, action, focus, options], turn, drop=drop)
        if value is not None:
            turn.outcome = outcome_of(value)
            turn.messages = value
        elif turn.cut or turn.dropped:
            turn.outcome = turn.outcome or ("dropped" if turn.dropped else "cut")
            self._attach(turn)
        turn.ended = time.time()
        with self.lock:
            self.turns.append(turn)
        self.log(turn)
        return turn

    # -- the kinds of turn ------------------------------------------------------------------

    def ask(self, kind: str, conversation: str) -> Turn:
        marker = f"M-{uuid.uuid4().hex[:12]}"
        turn = Turn(self.number, conversation, kind, marker=marker, dashboard=self.dashboard)
        message: dict[str, Any] = {"text": "", "files": []}
        extra: dict[str, Any] = {}
        word = {"plain": "PLAINQ", "tool": "TOOLQ", "diagnose": "DIAGQ", "closing": "PLAINQ"}
        if kind == "confirm":
            turn.question = f"DEPLOYQ-{self.dashboard} {marker} deploy it to staging"
        elif kind == "upload":
            path = self.upload(marker)
            if path is None:
                turn.outcome = "upload-refused"  # the person saw the upload fail
                turn.question = ""
                with self.lock:
                    self.turns.append(turn)
                return turn
            turn.question = f"UPLOADQ {marker} what is in this file?"
            meta = {"_type": "gradio.FileData"}
            message["files"] = [{"path": path, "orig_name": f"{marker}.csv", "meta": meta}]
        elif kind == "workflow":
            turn.question = f"safe deploy {marker}"
            extra["options"] = {"mode": "yaml", "workflow": "deploy_to_staging"}
            extra["focus"] = {"kind": "dashboard", "id": self.dashboard, "title": "soak"}
        else:
            turn.question = f"{word[kind]} {marker} please"
            if kind == "diagnose":
                extra["options"] = {"mode": "diagnose"}
        message["text"] = turn.question
        return self.submit(turn, message, **extra)

    def decide(self, asked: Turn) -> Turn | None:
        """Confirm or reject the card `asked` ended with (as the person saw it)."""
        cards = [
            m["metadata"]
            for m in asked.messages
            if (m.get("metadata") or {}).get("type") == "confirm_required"
        ]
        if asked.final != "confirm" or not cards:
            return None
        action = self.rng.choice(["confirm", "reject"])
        turn = Turn(
            self.number,
            asked.conversation,
            "decision",
            marker=asked.marker,
            dashboard=asked.dashboard,
            decision=action,
            call_id=str(cards[0].get("call_id")),
        )
        return self.submit(turn, dict(EMPTY), action=action, options={"call_id": turn.call_id})

    def run(self, deadline: float, max_turns: int) -> None:
        """Random turns until `deadline` or `max_turns`; a failure of the soak's own code is
        kept for the report (`self.crash`)."""
        try:
            self._walk(deadline, max_turns)
        except Exception:  # the harness's, not the platform's: reported, never hidden
            self.crash = traceback.format_exc()

    def _walk(self, deadline: float, max_turns: int) -> None:
        self.login()
        conversation = self.new_conversation()
        kinds, weights = list(KINDS), list(KINDS.values())
        while time.monotonic() < deadline and len(self.turns) < max_turns:
            if self.rng.random() < NEW_CONVERSATION_P:
                conversation = self.new_conversation()
            kind = self.rng.choices(kinds, weights)[0]
            turn = self.ask(kind, conversation)
            if kind in ("confirm", "workflow"):
                turn = self.decide(turn) or turn
            # a person reads the answer; after an error, waits a moment before trying again
            time.sleep(self.rng.uniform(0, 0.5) + (1.0 if turn.final != "answer" else 0))

    def close(self) -> None:
        """After the faults: one plain turn in every conversation (it must be answered)."""
        self.login()  # a token that outlives the soak's end
        for conversation in self.conversations:
            self.ask("closing", conversation)
        self.http.close()
