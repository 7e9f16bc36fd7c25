"""Start slots (agent/admission.py): at most `slots` runs starting at once; a slot comes
back when the run's first model request goes out (from any task the run started), when it is
left, or after `hold_s`; a cancelled waiter takes no slot with it."""

from __future__ import annotations

import asyncio

import pytest

from agent.admission import Admission, started


async def _admitted(admission: Admission, entered: list[int], key: int, leave: asyncio.Event):
    async with admission.admit():
        entered.append(key)
        await leave.wait()


async def test_at_most_slots_runs_start_at_once_and_the_next_gets_in_when_one_leaves():
    admission = Admission(slots=2, hold_s=30)
    entered: list[int] = []
    leave = [asyncio.Event() for _ in range(3)]
    tasks = [asyncio.create_task(_admitted(admission, entered, i, leave[i])) for i in range(3)]
    await asyncio.sleep(0.05)
    assert entered == [0, 1] and admission.waiting == 1

    leave[1].set()
    await asyncio.sleep(0.05)
    assert entered == [0, 1, 2] and admission.waiting == 0
    for event in leave:
        event.set()
    await asyncio.gather(*tasks)


async def test_the_first_model_request_from_a_task_the_run_started_gives_the_slot_back():
    admission = Admission(slots=1, hold_s=30)
    second_in = asyncio.Event()
    model_called = asyncio.Event()

    async def first_run() -> None:
        async with admission.admit():
            # LangGraph runs the model node in a task of its own, with a copy of the context
            await asyncio.create_task(_model_node(model_called))
            await asyncio.sleep(0.3)  # streaming the answer: no slot held

    async def second_run() -> None:
        async with admission.admit():
            second_in.set()

    first = asyncio.create_task(first_run())
    await asyncio.sleep(0.02)
    second = asyncio.create_task(second_run())
    await asyncio.wait_for(model_called.wait(), 1)
    await asyncio.wait_for(second_in.wait(), 0.2)  # long before the first run ends
    assert not first.done()
    await asyncio.gather(first, second)


async def _model_node(called: asyncio.Event) -> None:
    started()
    called.set()


async def test_a_start_that_waits_on_something_else_keeps_its_slot_only_hold_s():
    admission = Admission(slots=1, hold_s=0.2)
    in_second = asyncio.Event()

    async def slow_start() -> None:
        async with admission.admit():
            await asyncio.sleep(2)  # a busy lease, a large upload

    async def next_run() -> None:
        async with admission.admit():
            in_second.set()

    slow = asyncio.create_task(slow_start())
    await asyncio.sleep(0.02)
    loop = asyncio.get_running_loop()
    began = loop.time()
    other = asyncio.create_task(next_run())
    await asyncio.wait_for(in_second.wait(), 1.5)
    assert loop.time() - began < 1.0
    slow.cancel()
    await asyncio.gather(slow, other, return_exceptions=True)


async def test_a_slot_given_back_twice_is_given_back_once():
    admission = Admission(slots=1, hold_s=0.05)
    async with admission.admit() as ticket:
        started()
        ticket.leave()
        await asyncio.sleep(0.1)  # the hold timer, had it not been cancelled
        assert not ticket.held
    entered: list[int] = []
    leave = asyncio.Event()
    tasks = [asyncio.create_task(_admitted(admission, entered, i, leave)) for i in range(2)]
    await asyncio.sleep(0.02)
    assert entered == [0]  # still one slot, not two
    leave.set()
    await asyncio.gather(*tasks)


async def test_a_waiter_cancelled_before_its_turn_takes_no_slot():
    admission = Admission(slots=1, hold_s=30)
    leave = asyncio.Event()
    entered: list[int] = []
    holder = asyncio.create_task(_admitted(admission, entered, 0, leave))
    await asyncio.sleep(0.01)
    waiter = asyncio.create_task(_admitted(admission, entered, 1, asyncio.Event()))
    await asyncio.sleep(0.01)
    assert admission.waiting == 1
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert admission.waiting == 0
    leave.set()
    await holder
    late = asyncio.Event()
    late.set()
    await asyncio.wait_for(_admitted(admission, entered, 2, late), 0.5)
    assert entered == [0, 2]


async def test_no_limit_admits_every_run_at_once():
    admission = Admission(slots=0, hold_s=0.5)
    entered: list[int] = []
    leave = asyncio.Event()
    tasks = [asyncio.create_task(_admitted(admission, entered, i, leave)) for i in range(50)]
    await asyncio.sleep(0.02)
    assert len(entered) == 50 and admission.waiting == 0
    started()  # outside any run: nothing to give back
    leave.set()
    await asyncio.gather(*tasks)
