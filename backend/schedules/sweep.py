"""A health sweep: every dashboard of an environment validated as the owner; the newly failing
ones diagnosed through the agent (diagnosis mode, in the schedule's conversation), the
recovered ones listed. It notifies only when something changed since its previous run (the
first run counts every failing dashboard as newly failing)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from backend import acting
from backend.config import Settings
from backend.conversations import service as conversations
from backend.conversations.schemas import MessageCreate
from backend.dashboards import search, validation
from backend.errors import AppError
from backend.identity.models import User
from backend.principal import Principal
from backend.schedules import agent_turn, report
from backend.schedules.models import Schedule
from backend.schedules.report import Failing

if TYPE_CHECKING:
    from backend.schedules.firing import Ended

log = logging.getLogger("backend.schedules")
PAGE = 200
MAX_DASHBOARDS = 2000
QUESTION_BYTES = 280  # a diagnosis question stays under the agent's DIAGNOSIS__MAX_QUERY_BYTES


async def _owner(factory: async_sessionmaker[AsyncSession], schedule: Schedule) -> Principal:
    async with factory() as session:
        user = await session.get(User, schedule.owner_id)
        assert user is not None
        return Principal(user.id, user.username, list(user.roles))


async def check(
    *, factory: async_sessionmaker[AsyncSession], settings: Settings, actor: Principal, env: str
) -> tuple[int, list[Failing]]:
    """Validate every dashboard `env` serves, as `actor`: (how many checked, the failing)."""
    # Superset as the person: the sweep's reads carry the owner's own Superset session.
    acting.acting_as(acting.Person(actor.user_id, settings, factory))
    failing: list[Failing] = []
    checked = 0
    async with factory() as session:
        ids: list[tuple[int, str]] = []
        for offset in range(0, MAX_DASHBOARDS, PAGE):
            found = await search.search(
                session=session, query=None, status=None, tag=None, environment=env,
                limit=PAGE, offset=offset, settings=settings,
            )  # fmt: skip
            ids += [(d.id, d.title) for d in found.items]
            if len(found.items) < PAGE:
                break
        for dashboard_id, title in ids:
            try:
                result = await validation.validate(
                    session=session, settings=settings, actor=actor,
                    dashboard_id=dashboard_id, ref=None, environment=env,
                )  # fmt: skip
            except AppError as exc:  # not deployed there, or its Superset did not answer
                log.info("sweep: dashboard %s not checked in %s: %s", dashboard_id, env, exc)
                continue
            checked += 1
            if result.status == "failing":
                errors = [c.message for c in result.charts if c.status == "failing"]
                failing.append(Failing(dashboard_id, title, (errors or [""])[0]))
    return checked, failing


async def _diagnose(
    settings: Settings, schedule: Schedule, token: str, env: str, dashboard: Failing
) -> dict[str, Any]:
    question = f"Dashboard {dashboard.id} ({dashboard.title}) fails in {env}: {dashboard.error}"
    question = question.encode()[: QUESTION_BYTES - 10].decode("utf-8", "ignore") + " Why?"
    try:
        turn = await agent_turn.run_turn(
            agent_url=settings.schedules.agent_url,
            token=token,
            conversation_id=str(schedule.conversation_id),
            text=question,
            options={"mode": "diagnose"},
            timeout_s=settings.schedules.run_deadline_s,
        )
    except agent_turn.AgentUnavailable:
        return {"outcome": "failed"}
    found = turn.of_type("diagnosis")
    return dict(found[-1]["metadata"]) if found else {"outcome": "failed"}


async def run(
    *,
    settings: Settings,
    schedule: Schedule,
    token: str,
    factory: async_sessionmaker[AsyncSession],
) -> Ended:
    from backend.schedules.firing import Ended  # the result type; firing imports this module

    env = str((schedule.sweep or {}).get("environment"))
    actor = await _owner(factory, schedule)
    checked, failing = await check(factory=factory, settings=settings, actor=actor, env=env)
    before: dict[str, str] = dict(schedule.sweep_state or {})
    now = {str(d.id): d.title for d in failing}
    new = [d for d in failing if str(d.id) not in before]
    recovered = [(int(k), v) for k, v in before.items() if k not in now]
    diagnoses = [await _diagnose(settings, schedule, token, env, d) for d in new]
    text = report.sweep_text(env, checked, failing, new, diagnoses, recovered)
    async with factory() as session:
        message = await conversations.append_message(
            session=session,
            actor=actor,
            conversation_id=schedule.conversation_id,  # type: ignore[arg-type]
            data=MessageCreate(role="assistant", content=text, metadata={"sweep": env}),
        )
    changed = bool(new or recovered)
    return Ended("ok", message.id, notify=changed, text=text, sweep_state=now)
