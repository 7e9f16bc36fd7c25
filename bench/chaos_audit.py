"""The auditor of the chaos soak (bench/chaos.py): after the faults stop and every conversation
had its closing turn, read the database, the audit log and the scripted model's request log,
and check the invariants of issues 37 and 43 against what the people saw (bench/chaos_people.py).
Each check returns its violations, one line each; none is an empty list."""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

import psycopg
from langchain_core.messages import AIMessage, ToolMessage

from bench import chaos_gateway
from bench.chaos_gateway import Failure, Outage
from bench.chaos_people import MARKER, Turn
from tests.agent.support import thread_messages

# Errors a person may see when a fault hits the turn: each says what happened.
CLEAR = {
    "RUN_INTERRUPTED",
    "BACKEND_UNAVAILABLE",
    "LLM_ERROR",
    "UNSUPPORTED_FILE",
    "CHECKPOINT_EXPIRED",
    "NO_PENDING_CONFIRMATION",
    "USAGE_LIMIT",
}
# A workflow stopped by a step's error, which it names (its `details.code`): a fault's, or
# the platform refusing the step (a deploy whose validation fails).
STEP = {"WORKFLOW_FAILED"}
INVARIANTS = {
    1: "every message the client got accepted is stored exactly once, in order",
    2: "every turn ends with its answer or a clear error, none missing",
    3: "no dangerous tool ran twice, or without its confirmation",
    4: "no thread has a tool call without its result in the checkpoint",
    5: "no conversation stays busy past the lease TTL once the faults stop",
    6: "usage counted once per model call; debug records match the calls made",
    7: "every accepted upload is readable, or refused with a clear error the person sees",
    8: "no gateway 502/503/504 or connection error while a replica of each kind was alive",
}


def _clock(epoch: float) -> str:
    """A wall-clock time as the processes' logs and the fault log write it."""
    return time.strftime("%H:%M:%S", time.localtime(epoch)) + f".{int(epoch % 1 * 10)}"


def _rows(database_url: str, sql: str, params: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
    with psycopg.connect(database_url, autocommit=True) as conn:
        return list(conn.execute(sql, list(params)).fetchall())


class Audit:
    """What the database and the model saw, read once; a check per invariant."""

    def __init__(
        self,
        database_url: str,
        turns: list[Turn],
        requests: list[dict[str, Any]],
        *,
        deploys_before: Counter[str],
        failures: Iterable[Failure] = (),
        outages: Iterable[Outage] = (),
        replicas: dict[str, int] | None = None,
    ) -> None:
        self.url = database_url
        self.failures, self.outages = list(failures), list(outages)
        self.replicas = replicas or {"backend": 2, "agent": 2}
        self.turns = turns
        self.deploys_before = deploys_before
        self.conversations = sorted({t.conversation for t in turns})
        self.by_marker = {t.marker: t for t in turns if t.marker and t.kind != "decision"}
        self.messages = _rows(
            database_url,
            "SELECT id, conversation_id::text, role, content, metadata FROM agent_messages "
            "WHERE conversation_id::text = ANY(%s) ORDER BY id",
            [self.conversations],
        )
        # each model request belongs to the turn whose marker its last user message carries
        self.requests: Counter[str] = Counter()
        self.request_text: dict[str, str] = defaultdict(str)
        for body in requests:
            users = [m for m in body.get("messages", []) if m.get("role") == "user"]
            text = str(users[-1].get("content")) if users else ""
            found = MARKER.findall(text)
            turn = self.by_marker.get(found[0]) if found else None
            if turn is not None:
                self.requests[turn.conversation] += 1
                self.request_text[turn.marker] += str(body)

    # -- the invariants ------------------------------------------------------------------

    def stored_once_in_order(self) -> list[str]:
        bad: list[str] = []
        stored: dict[str, list[str]] = defaultdict(list)
        decisions: Counter[str] = Counter()
        for _id, conversation, role, content, metadata in self.messages:
            meta = metadata or {}
            if meta.get("type") == "decision":
                if meta.get("reason") is None:  # a person's; a superseded card's is the agent's
                    decisions[str(meta.get("call_id"))] += 1
            elif role == "user":
                stored[conversation] += MARKER.findall(content or "")[:1]
        for call_id, n in decisions.items():
            if n > 1:
                bad.append(f"decision on {call_id} stored {n} times")
        for conversation in self.conversations:
            sent = [
                t.marker
                for t in sorted(self.turns, key=lambda t: t.started)
                if t.conversation == conversation and t.kind != "decision" and t.question
            ]
            seen = stored[conversation]
            for marker, n in Counter(seen).items():
                if n > 1:
                    bad.append(f"{marker} stored {n} times in {conversation}")
            order = [m for m in sent if m in seen]
            if order != list(dict.fromkeys(seen)):
                bad.append(f"{conversation}: stored out of order {seen} (sent {sent})")
            for marker in sent:
                turn = self.by_marker[marker]
                if turn.final in ("answer", "confirm") and marker not in seen:
                    bad.append(f"{marker} ({turn.kind}) answered but its question not stored")
        return bad

    def every_turn_ended(self) -> list[str]:
        bad: list[str] = []
        answered = self._answered_markers()
        for t in self.turns:
            final = t.final
            if final in ("answer", "confirm", "upload-refused") or final.startswith("gateway:"):
                continue
            code, _, inner = final.partition(":")[2].partition("/")
            if final.startswith("error:") and (code in CLEAR or (code in STEP and inner)):
                continue
            if final == "notice:NO_ACTIVE_RUN" and (t.cut or t.dropped):
                # the run ended (or never started) while the person was away: its answer is
                # stored, or its question is not (nothing was accepted)
                if t.kind == "decision" or t.marker in answered or not self._stored(t.marker):
                    continue
                bad.append(
                    f"{t.marker} ({t.kind}) stored, no answer, and none shown (first "
                    f"{t.outcome!r}) in {t.conversation} at {_clock(t.started)}-{_clock(t.ended)}"
                )
                continue
            how = "re-attached" if t.attached else "its own stream"
            cut = " cut" if t.cut else " dropped" if t.dropped else ""
            bad.append(
                f"{t.marker or t.call_id} ({t.kind}) ended as {final!r} ({how}; first "
                f"{t.outcome!r}{cut}) in {t.conversation} at {_clock(t.started)}-{_clock(t.ended)}"
            )
        return bad

    def dangerous_tools_once(self) -> list[str]:
        bad: list[str] = []
        confirms: Counter[str] = Counter(
            str(t.dashboard) for t in self.turns if t.kind == "decision" and t.decision == "confirm"
        )
        deploys = self._deploys()
        for dashboard, n in deploys.items():
            ran = n - self.deploys_before.get(dashboard, 0)
            allowed = confirms.get(dashboard, 0)
            if ran > allowed:
                bad.append(f"dashboard {dashboard}: {ran} deploys for {allowed} confirms")
        for conversation in self.conversations:
            results = Counter(
                m.tool_call_id
                for m in thread_messages(self.url, conversation)
                if isinstance(m, ToolMessage) and m.name == "deploy_dashboard"
            )
            bad += [
                f"{conversation}: deploy {c} answered {n} times"
                for c, n in results.items()
                if n > 1
            ]
        return bad

    def tool_calls_answered(self) -> list[str]:
        bad: list[str] = []
        for conversation in self.conversations:
            messages = thread_messages(self.url, conversation)
            answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
            for m in messages:
                if isinstance(m, AIMessage):
                    bad += [
                        f"{conversation}: call {c['id']} ({c['name']}) has no result"
                        for c in m.tool_calls
                        if c["id"] not in answered
                    ]
        return bad

    def none_busy(self) -> list[str]:
        rows = _rows(
            self.url,
            "SELECT conversation_id::text, holder FROM agent_runs WHERE expires_at > now()",
        )
        return [f"{c} still leased by {h}" for c, h in rows]

    def usage_once(self) -> list[str]:
        bad: list[str] = []
        calls = dict(
            _rows(
                self.url,
                "SELECT conversation_id::text, count(*) FROM usage_calls "
                "WHERE conversation_id::text = ANY(%s) GROUP BY 1",
                [self.conversations],
            )
        )
        totals = dict(
            _rows(
                self.url,
                "SELECT conversation_id::text, model_calls FROM usage_conversations "
                "WHERE conversation_id::text = ANY(%s)",
                [self.conversations],
            )
        )
        debug = dict(
            _rows(
                self.url,
                "SELECT m.conversation_id::text, sum(jsonb_array_length(d.calls) + d.dropped_calls)"
                " FROM debug_records d JOIN agent_messages m ON m.id = d.message_id "
                "WHERE m.conversation_id::text = ANY(%s) GROUP BY 1",
                [self.conversations],
            )
        )
        (daily,) = _rows(self.url, "SELECT coalesce(sum(model_calls), 0) FROM usage_daily")[0]
        (rows,) = _rows(self.url, "SELECT count(*) FROM usage_calls")[0]
        if int(daily) != int(rows):
            bad.append(f"usage_daily counts {daily} calls, usage_calls holds {rows}")
        for conversation in self.conversations:
            made = self.requests.get(conversation, 0)
            counted = int(calls.get(conversation, 0))
            if int(totals.get(conversation, 0)) != counted:
                bad.append(f"{conversation}: usage total {totals.get(conversation)} != {counted}")
            if counted > made:
                bad.append(f"{conversation}: {counted} calls counted for {made} made")
            recorded = int(debug.get(conversation) or 0)
            if recorded > made:
                bad.append(f"{conversation}: debug records {recorded} calls for {made} made")
            if self._clean(conversation) and (counted, recorded) != (made, made):
                bad.append(
                    f"{conversation} (no fault): {made} calls made, {counted} counted, "
                    f"{recorded} in debug records"
                )
        return bad

    def uploads_readable(self) -> list[str]:
        bad: list[str] = []
        names = {
            str(n)
            for (n,) in _rows(
                self.url,
                "SELECT name FROM agent_attachments WHERE conversation_id::text = ANY(%s)",
                [self.conversations],
            )
        }
        for t in self.turns:
            if t.kind != "upload" or t.final == "upload-refused":
                continue
            if t.final == "answer":
                if t.marker not in self.request_text.get(t.marker, ""):
                    bad.append(f"{t.marker}: answered, but the model never saw the file")
                if f"{t.marker}.csv" not in names:
                    bad.append(f"{t.marker}: answered, but no attachment row")
        return bad

    # -- helpers -------------------------------------------------------------------------

    def _stored(self, marker: str) -> bool:
        return any(
            role == "user" and marker in (content or "")
            for _i, _c, role, content, _m in self.messages
        )

    def _answered_markers(self) -> set[str]:
        """Markers whose question is followed by an assistant row in its conversation."""
        found: set[str] = set()
        last: dict[str, str] = {}
        for _id, conversation, role, content, _meta in self.messages:
            if role == "user":
                markers = MARKER.findall(content or "")
                last[conversation] = markers[0] if markers else ""
            elif role == "assistant" and last.get(conversation):
                found.add(last[conversation])
        return found

    def _clean(self, conversation: str) -> bool:
        return all(
            not t.cut and t.final in ("answer", "confirm", "upload-refused")
            for t in self.turns
            if t.conversation == conversation
        )

    def _deploys(self) -> Counter[str]:
        return deploy_counts(self.url)

    def run(self) -> dict[int, list[str]]:
        return {
            1: self.stored_once_in_order(),
            2: self.every_turn_ended(),
            3: self.dangerous_tools_once(),
            4: self.tool_calls_answered(),
            5: self.none_busy(),
            6: self.usage_once(),
            7: self.uploads_readable(),
            8: chaos_gateway.violations(self.failures, self.outages, self.replicas),
        }


def deploy_counts(database_url: str) -> Counter[str]:
    """dashboard.deploy audit rows (every outcome) by dashboard id."""
    return Counter(
        {
            str(d): int(n)
            for d, n in _rows(
                database_url,
                "SELECT resource_id, count(*) FROM assistant_audit "
                "WHERE action = 'dashboard.deploy' GROUP BY 1",
            )
        }
    )
