"""The run skeleton, the routing and each kind's input, without processes (a fake backend,
lease and graph: tests/agent/unit/fake_run.py): what a submit is routed to, what each kind puts
to the thread and queues for the history, and what the skeleton serves and stores at the end."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from agent import writes
from agent.backend_client import BackendError
from agent.context import Context
from agent.errors import AgentError, Code, UsageLimit
from agent.hooks import RunHooks, RunInfo, RunOutcome
from agent.inputs import Options, Submit
from agent.runs import routing, skeleton
from agent.runs.kinds.diagnose import DiagnosisChat
from agent.runs.kinds.dynamic import DynamicRun
from agent.runs.kinds.none import NoneRun
from agent.runs.kinds.workflow import WorkflowRun
from agent.runs.question import attachments_of, new_message
from agent.runs.result import RunResult, ThreadWrite
from agent.runs.skeleton import UNSAVED
from agent.runs.state import Run, RunKind
from agent.runs.supersede import supersede
from agent.stream import Turn
from tests.agent.unit.fake_run import CID, FakeAgent, FakeBackend, FakeLease, FakeRun, make_run


def _run(mode: str = "dynamic", **submit: Any) -> tuple[FakeRun, FakeBackend, FakeAgent]:
    backend, agent = FakeBackend(), FakeAgent()
    run = make_run(backend, agent, FakeLease(), mode=mode, model=None)
    if submit:
        run.submit = Submit(
            **{
                "text": "Check the service",
                "files": [],
                "conversation_id": CID,
                "action": "",
                "focus": None,
                "options": Options(),
                "mode": mode,
                **submit,
            }
        )
    return run, backend, agent


# -- routing ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "kind"),
    [("dynamic", DynamicRun), ("none", NoneRun), ("diagnose", DiagnosisChat)],
)
async def test_a_new_message_is_routed_to_its_modes_kind(mode, kind):
    run, _, _ = _run(mode)
    assert type(await routing.route(run)) is kind
    assert run.turn.entries == []


async def test_yaml_with_no_matching_workflow_is_a_notice_and_a_dynamic_answer():
    run, backend, _ = _run("yaml")
    assert type(await routing.route(run)) is DynamicRun
    assert [e.metadata["code"] for e in run.turn.entries] == [Code.NO_WORKFLOW_MATCHED]
    assert backend.paths("GET", r"/api/workflow/definitions$")


async def test_a_decision_with_nothing_waiting_goes_to_the_agent_which_says_so():
    run, backend, _ = _run("dynamic", action="confirm")
    assert type(await routing.route(run)) is DynamicRun
    assert backend.paths("GET", r"/executions$")  # a waiting workflow step was looked for


# -- each kind's input ------------------------------------------------------------------------


async def _prepared(run: Run, kind: Any) -> None:
    """What the skeleton does before `execute`: check, supersede, prepare."""
    await kind.check(run)
    await kind.prepare(run, await supersede(run, at_once=kind.supersedes_at_once))


async def test_the_dynamic_kind_puts_the_question_last_and_queues_its_user_row():
    run, backend, _ = _run("dynamic")
    kind = DynamicRun()
    await _prepared(run, kind)
    assert isinstance(kind.graph_input, dict)
    question = kind.graph_input["messages"][-1]
    assert isinstance(question, HumanMessage) and question.content == "Check the service"
    assert kind.question is not None and kind.question.human is question  # returned, kept
    assert backend.paths("POST", r"/messages$") == []  # deferred until the first output
    await run.history.flush()
    assert [(b["role"], b["content"]) for b in backend.paths("POST", r"/messages$")] == [
        ("user", "Check the service")
    ]


async def test_the_none_kind_offers_no_tools_and_asks_the_same_question():
    run, _, _ = _run("none")
    kind = NoneRun()
    await _prepared(run, kind)
    await run.history.flush()
    assert run.context.offer_tools is False
    assert kind.question is not None and kind.question.human.content == "Check the service"


async def test_the_diagnosis_kind_queues_its_question_with_its_mode():
    run, backend, _ = _run("diagnose")
    kind = DiagnosisChat()
    await _prepared(run, kind)
    await run.history.flush()
    rows = backend.paths("POST", r"/messages$")
    assert [(b["role"], b["metadata"]) for b in rows] == [("user", {"mode": "diagnose"})]


async def test_the_workflow_kind_reads_nothing_before_it_runs():
    run, backend, _ = _run("yaml")
    await WorkflowRun(waiting={"id": 1}).prepare(run, None)
    assert backend.calls == []


async def test_a_cut_message_is_told_and_its_row_says_so():
    run, backend, _ = _run("dynamic", truncated=True)
    await new_message(run, await supersede(run, at_once=False), await attachments_of(run))
    await run.history.flush()
    assert [e.metadata["code"] for e in run.turn.entries] == [Code.TRUNCATED]
    (row,) = backend.paths("POST", r"/messages$")
    assert row["metadata"]["truncated"] is True


# -- the skeleton: drive, serve, the end --------------------------------------------------------


class Says:
    """A kind that answers `text`, or raises `error` after it, or sleeps `hang_s` first."""

    supersedes_at_once = False
    out_of_time = "Out of time."
    links_row = False  # `result.then`: the row stored before the release, its id kept

    def __init__(
        self, text: str, error: BaseException | None = None, *, hang_s: float = 0.0
    ) -> None:
        self.text, self.error, self.hang_s = text, error, hang_s
        self.stopped: list[Code] = []
        self.stored_as: int | None = None

    def deadline_s(self, run: Run) -> float:
        return 0.2

    async def check(self, run: Run) -> None:
        pass

    async def prepare(self, run: Run, superseded: Any) -> None:
        run.history.append_later("user", run.submit.text, {})

    async def execute(self, run: Run) -> None:
        run.show.text("m1", self.text)
        await asyncio.sleep(self.hang_s)
        if self.error is not None:
            raise self.error

    async def stop(self, run: Run, reason: Code) -> None:
        self.stopped.append(reason)

    def result(self, run: Run) -> RunResult:
        return RunResult(row=run.show.record(), then=self._stored if self.links_row else None)

    async def _stored(self, message_id: int | None) -> None:
        self.stored_as = message_id


def _route(kind: RunKind) -> Any:
    async def route(_: Run) -> RunKind:
        return kind

    return route


async def test_a_finished_run_leaves_its_answer_and_debug_record_for_the_end():
    run, backend, _ = _run()
    await skeleton.drive(run, _route(Says("Done.")), run.end)
    assert run.end.parts["message"]["content"] == "Done."
    assert run.end.parts["message"]["role"] == "assistant"
    assert "debug" in run.end.parts
    assert [b["role"] for b in backend.paths("POST", r"/messages$")] == ["user"]


async def test_a_failed_run_stores_what_it_queued_and_no_answer():
    run, backend, _ = _run()
    with pytest.raises(AgentError):
        await skeleton.drive(run, _route(Says("half", AgentError("boom"))), run.end)
    assert [b["role"] for b in backend.paths("POST", r"/messages$")] == ["user"]
    assert run.end.parts == {}


async def test_the_daily_budget_reached_mid_run_stops_it_and_keeps_what_was_said():
    run, _, _ = _run()
    kind = Says("Part of it", UsageLimit("The daily budget is used up."))
    await skeleton.drive(run, _route(kind), run.end)
    assert kind.stopped == [Code.USAGE_LIMIT]
    types = [e.metadata.get("type") for e in run.turn.entries]
    assert types == [None, "error"]
    assert run.turn.entries[-1].metadata["code"] == Code.USAGE_LIMIT
    assert "Part of it" in run.end.parts["message"]["content"]


async def test_the_deadline_is_the_skeletons_the_kind_closes_and_the_turn_says_so():
    run, _, _ = _run()
    kind = Says("Part of it", hang_s=30)
    await asyncio.wait_for(skeleton.drive(run, _route(kind), run.end), 5)
    assert kind.stopped == [Code.DEADLINE]
    (error,) = [e.metadata for e in run.turn.entries if e.metadata.get("type") == "error"]
    assert error["code"] == Code.BUDGET_EXHAUSTED and error["message"] == "Out of time."
    assert "Part of it" in run.end.parts["message"]["content"]  # what was said is stored


async def test_a_lost_lease_closes_the_kind_raises_and_stores_no_answer():
    backend, agent = FakeBackend(), FakeAgent()
    run = make_run(backend, agent, FakeLease(lambda: True), mode="dynamic", model=None)
    kind = Says("Part of it", hang_s=30)
    with pytest.raises(AgentError) as lost:
        await asyncio.wait_for(skeleton.drive(run, _route(kind), run.end), 5)
    assert lost.value.code == Code.CONVERSATION_BUSY
    assert kind.stopped == [Code.CONVERSATION_BUSY]
    assert run.end.parts == {} and kind.stored_as is None


async def test_the_persons_stop_closes_the_kind_and_keeps_what_was_said():
    run, _, _ = _run()
    kind = Says("Part of it", hang_s=30)
    task = asyncio.create_task(skeleton.drive(run, _route(kind), run.end))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert kind.stopped == [Code.CANCELLED]
    assert "Part of it" in run.end.parts["message"]["content"]


async def test_a_kind_that_links_its_row_has_it_stored_before_stored_runs():
    run, backend, _ = _run()
    kind = Says("Done.")
    kind.links_row = True
    await skeleton.drive(run, _route(kind), run.end)
    (end,) = backend.paths("POST", r"/end$")
    assert end["message"]["content"] == "Done."
    assert run.end.parts == {}  # nothing left to ride on the release
    assert kind.stored_as == run.end.message_id == 42


class Ending(FakeLease):
    """A lease whose release is the run's end: it keeps the parts and answers a row id."""

    def __init__(self) -> None:
        super().__init__()
        self.released: list[dict[str, Any]] = []

    async def release(self, parts: Mapping[str, Any]) -> dict[str, Any]:
        self.released.append(dict(parts))
        return {"message_id": 9}


class Watches(RunHooks):
    def __init__(self, info: RunInfo) -> None:
        super().__init__(info)
        self.seen: list[Any] = []

    async def started(self, grant: Mapping[str, Any]) -> None:
        self.seen.append("started")

    def finished(self, outcome: RunOutcome, messages: Sequence[Mapping[str, Any]]) -> None:
        self.seen.append(outcome)

    def closing(self) -> Mapping[str, Any]:
        return {"usage": {"calls": []}}

    async def flush(self) -> None:
        self.seen.append("flushed")


async def test_serve_runs_under_the_lease_and_ends_in_one_release(monkeypatch):
    run, _, _ = _run()
    lease = Ending()

    async def take(*args: Any, **kwargs: Any) -> Ending:
        return lease

    monkeypatch.setattr(skeleton, "_take_lease", take)
    turn = Turn(thread_id=CID)
    context = Context(
        user_token="user-jwt", user_id="1", username="u", roles=("admin",), conversation_id=CID
    )
    hook = Watches(RunInfo(run_id="r1", mode="dynamic", action="", context=context))
    await skeleton.serve(
        run.services,
        turn=turn,
        context=context,
        submit=run.submit,
        hooks=[hook],
        route=_route(Says("Done.")),
    )
    (parts,) = lease.released
    assert set(parts) == {"message", "debug", "usage"}
    assert parts["message"]["content"] == "Done."
    assert hook.seen == ["started", RunOutcome.COMPLETED, "flushed"]
    assert all(m["metadata"]["message_id"] == 9 for m in turn.snapshot())  # the stored row


class StoreAway(FakeBackend):
    """The backend's store stays away for history rows: every append is 503 STORE_UNAVAILABLE."""

    async def call(self, context: Context, method: str, path: str, **kwargs: Any) -> Any:
        if method == "POST" and path.endswith("/messages"):
            self.calls.append((method, path, kwargs.get("json")))
            raise BackendError(503, "STORE_UNAVAILABLE", "The conversation store is unavailable.")
        return await super().call(context, method, path, **kwargs)


async def test_a_question_that_could_not_be_saved_is_said_after_the_answer(monkeypatch):
    monkeypatch.setitem(writes.send.__kwdefaults__, "wait_s", 0.3)  # the bound, shortened
    backend, agent = StoreAway(), FakeAgent()
    run = make_run(backend, agent, FakeLease(), mode="dynamic", model=None)
    await skeleton.drive(run, _route(Says("Done.")), run.end)
    assert len(backend.paths("POST", r"/messages$")) >= 2  # tried again while it was away
    kinds = [(e.metadata.get("type"), e.metadata.get("code")) for e in run.turn.entries]
    assert kinds == [(None, None), ("error", Code.BACKEND_UNAVAILABLE)]
    assert run.turn.entries[-1].metadata["message"] == UNSAVED
    # the answer stands and is stored with the error, so the history says what happened
    assert run.end.parts["message"]["content"].startswith("Done.")
    assert run.end.parts["message"]["metadata"]["parts"][-1]["metadata"]["code"] == (
        Code.BACKEND_UNAVAILABLE
    )


class Tells(Says):
    """A kind that returns a message for the thread instead of writing it."""

    def result(self, run: Run) -> RunResult:
        told = ThreadWrite((AIMessage("Told.", id="t1"),), "model")
        return RunResult(thread=(told,), row=run.show.record())


async def test_the_skeleton_writes_what_a_kind_returns_into_the_thread_once():
    run, _, agent = _run()
    await skeleton.drive(run, _route(Tells("Done.")), run.end)
    assert [[m.text for m in u["messages"]] for u in agent.updates] == [["Told."]]
    assert run.end.parts["message"]["content"] == "Done."


async def test_what_a_kind_returns_is_not_written_once_its_lease_is_lost():
    backend, agent = FakeBackend(), FakeAgent()
    run = make_run(backend, agent, FakeLease(lambda: True), mode="dynamic", model=None)
    with pytest.raises(AgentError):
        await asyncio.wait_for(skeleton.drive(run, _route(Tells("x", hang_s=30)), run.end), 5)
    assert agent.updates == [] and run.end.parts == {}


async def test_a_new_message_supersedes_before_the_kind_prepares_and_a_decision_does_not():
    seen: list[bool] = []

    class Looks(Says):
        async def prepare(self, run: Run, superseded: Any) -> None:
            seen.append(superseded is not None)

    run, _, _ = _run()
    await skeleton.drive(run, _route(Looks("a")), run.end)
    decision, _, _ = _run(action="confirm")
    await skeleton.drive(decision, _route(Looks("b")), decision.end)
    assert seen == [True, False]
