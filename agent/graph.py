"""The agent: `create_agent` with our tools, middleware and the Postgres checkpointer."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import openai
from langchain.agents import AgentState, create_agent
from langchain.agents.middleware import (
    AgentMiddleware,
    HumanInTheLoopMiddleware,
    InterruptOnConfig,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import ToolCall
from langchain_core.tools import BaseTool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool
from pydantic import SecretStr

from agent import admission
from agent.checkpoints import DurableSaver
from agent.config import Settings
from agent.context import Context
from agent.demo.model import DEMO_NOTE, DemoChatModel
from agent.external.middleware import ConfirmRules, ExternalTools
from agent.hitl import DECISION_TYPES, EDIT_NOTICE
from agent.middleware import (
    ArgumentsFirst,
    LlmRetry,
    ModelInput,
    NoTools,
    RunBudget,
    ToolErrors,
    ToolSchemas,
)
from agent.perf import langsmith_inline
from agent.perf.delta_state import delta_state
from agent.perf.openai_stream import ChunkDicts, PlainCompletions
from agent.prompts import SYSTEM_PROMPT
from agent.tools.names import CONFIRM_TOOLS, describe_call

Agent = CompiledStateGraph[Any, Context, Any, Any]
SETUP_LOCK = 0x6167_656E_7443_6B70  # pg_advisory_lock key of the checkpointer's table setup
SETUP_RETRY_S = 0.2
CHECKPOINT_POOL_SIZE = 10  # shared by every run of a process; 200 runs fit max_connections=100
STEPS_PER_MODEL_CALL = 8  # graph steps one model call plus its tools and middleware can take


def build_model(settings: Settings) -> BaseChatModel:
    """ChatOpenAI on LLM_API_BASE; the offline demo model when it is unset (the one place that
    chooses it)."""
    if not settings.llm_api_base:
        return DemoChatModel()
    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else "not-needed"
    timeout = settings.llm.request_timeout_s
    client = ChunkDicts(
        api_key=key,
        base_url=settings.llm_api_base,
        timeout=timeout,
        max_retries=0,
        # The SDK's aiohttp transport (the `openai[aiohttp]` extra): it reads a streamed
        # answer with aiohttp's C parser, where the default transport runs h11 and an anyio
        # cancel scope for every chunk; a third of the CPU of a streamed call
        # (docs/architecture.md, "Per-turn cost"). Its one misnomer, a refused connection
        # reported as a connect timeout, is told apart in agent/middleware.py.
        http_client=openai.DefaultAioHttpClient(timeout=timeout),
    )
    return ChatOpenAI(
        base_url=settings.llm_api_base,
        api_key=SecretStr(key),
        model=settings.model_name,
        streaming=True,
        stream_usage=True,
        timeout=timeout,
        max_retries=0,  # LlmRetry retries once, visibly
        # No per-chunk `asyncio.wait_for` (a task per streamed chunk): a silent stream ends
        # at the transport's read timeout (`timeout`, between any two reads), and one that
        # only trickles keep-alives at the run's deadline (agent.run_deadline_s).
        stream_chunk_timeout=None,
        root_async_client=client,
        async_client=PlainCompletions(client, on_request=admission.started),
    )


async def close_model(model: BaseChatModel | None) -> None:
    """Close the model's HTTP client (its aiohttp session and pooled connections)."""
    client = getattr(model, "root_async_client", None)
    if isinstance(client, openai.AsyncOpenAI):
        await client.close()


def model_note(settings: Settings) -> str | None:
    """What people are told about the model build_model chooses: None for a configured one."""
    return None if settings.llm_api_base else DEMO_NOTE


def _describe(tool_call: ToolCall, state: Any, runtime: Runtime[Any]) -> str:
    lang = getattr(runtime.context, "lang", "en")
    return describe_call(tool_call["name"], tool_call["args"], lang)


def middleware(
    settings: Settings,
    *,
    guards: Sequence[AgentMiddleware[Any, Context, Any]] = (),
    external: ExternalTools | None = None,
) -> list[AgentMiddleware[Any, Context, Any]]:
    """In order: the `none` mode's tool removal (outermost, so the input budget counts what is
    really sent), argument checks, then confirmation (what runs before the pause re-runs on
    resume, so nothing before it may have side effects), then `guards` (they see only calls a
    person approved, e.g. the evaluation's dry run), then tool errors, limits, input, retry,
    and the tools' schemas converted once (innermost: what the model is bound with)."""
    # `edit`: a person's confirmation with edited arguments (agent/hitl.py checks them first).
    confirm: dict[str, bool | InterruptOnConfig] = {
        name: InterruptOnConfig(allowed_decisions=list(DECISION_TYPES), description=_describe)
        for name in CONFIRM_TOOLS
    }
    hitl: HumanInTheLoopMiddleware[Any, Context, Any] = HumanInTheLoopMiddleware(
        interrupt_on=confirm, interrupt_mode="per_call", edit_notice=EDIT_NOTICE
    )
    if external is not None:  # external tools that are not read-only pause for the same card
        hitl.interrupt_on = ConfirmRules(hitl.interrupt_on, external.servers, _describe)
    return [
        NoTools(),
        *([external] if external is not None else []),
        ArgumentsFirst(),
        hitl,
        *guards,
        ToolErrors(),
        RunBudget(
            max_model_calls=settings.agent.max_model_calls,
            max_tool_calls=settings.agent.max_tool_calls,
        ),
        ModelInput(max_input_tokens=settings.llm.max_input_tokens),
        LlmRetry(),
        ToolSchemas(),
    ]


def build_agent(
    settings: Settings,
    *,
    model: BaseChatModel,
    tools: Sequence[BaseTool],
    checkpointer: BaseCheckpointSaver[Any] | None,
    guards: Sequence[AgentMiddleware[Any, Context, Any]] = (),
    external: ExternalTools | None = None,
    state: type[AgentState[Any]] | None = None,
) -> Agent:
    """The compiled agent graph; thread_id = conversation id, Context per run; its messages
    checkpointed as deltas (agent/perf/delta_state.py); `external`: the admin's external MCP tools
    (agent/external/), offered and confirmed like the built-in ones."""
    langsmith_inline.install()
    return create_agent(
        model,
        list(tools),
        system_prompt=SYSTEM_PROMPT,
        middleware=middleware(settings, guards=guards, external=external),
        checkpointer=checkpointer,
        state_schema=state or delta_state(settings.agent.snapshot_every),
        context_schema=Context,
        name="agent",
    )


def recursion_limit(settings: Settings) -> int:
    """Enough graph steps for the model-call budget; past it the run is out of budget."""
    return (settings.agent.max_model_calls + 1) * STEPS_PER_MODEL_CALL


def psycopg_url(url: str) -> str:
    """A libpq URL from a SQLAlchemy-style one."""
    for prefix in ("postgresql+asyncpg://", "postgresql+psycopg://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql://" + url[len(prefix) :]
    return url


async def _take_lock(conn: Any, key: int) -> None:
    """The session advisory lock `key`, tried every SETUP_RETRY_S until it is ours."""
    while True:
        query = "SELECT pg_try_advisory_lock(%s) AS taken"
        row = await (await conn.execute(query, (key,))).fetchone()
        if row and row["taken"]:
            return
        await asyncio.sleep(SETUP_RETRY_S)


@asynccontextmanager
async def open_checkpointer(database_url: str) -> AsyncIterator[DurableSaver]:
    """The Postgres checkpointer on a small pool; creates its tables (FR-027). Connections cut
    by a database restart are replaced when a call finds one lost (agent/checkpoints.py)."""
    pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
        psycopg_url(database_url),
        min_size=1,
        max_size=CHECKPOINT_POOL_SIZE,
        open=False,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
    )
    await pool.open(wait=True)
    try:
        saver = DurableSaver(pool)
        # Replicas started together (`agent-chat up --agents 2` on a new database) would
        # otherwise both create the tables and one would die on the migration table's key:
        # one at a time, under a session advisory lock held on a connection of its own. Tried,
        # not waited for: a session blocked in pg_advisory_lock holds a snapshot, and the
        # setup's CREATE INDEX CONCURRENTLY waits for every snapshot (a deadlock).
        async with pool.connection() as conn:
            await _take_lock(conn, SETUP_LOCK)
            try:
                await saver.setup()
            finally:
                await conn.execute("SELECT pg_advisory_unlock(%s)", (SETUP_LOCK,))
        yield saver
    finally:
        await pool.close()
