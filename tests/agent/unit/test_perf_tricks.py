"""The performance tricks of agent/perf/ reach into libraries; these fail loudly when a library
changes under one of them (a new version past what the trick was checked against, a private
name gone, a signature changed), so the trick is checked again before the pin moves.

Each assertion's message names the module to re-read. pyproject.toml pins every library named
here with an upper bound; the version checks below are the same bounds.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import sys
from types import SimpleNamespace

import gradio as gr
import langsmith
import openai
import pytest
from openai._base_client import AsyncAPIClient, make_request_options
from packaging.version import Version

from agent.perf import gradio_config, langsmith_inline, matplotlib_absent
from agent.perf.openai_stream import ChunkDicts, PlainCompletions
from agent.perf.pace import FULL_RATE_STREAMS, MAX_INTERVAL_S, MIN_INTERVAL_S, Pace

CHECKED = {  # library -> the versions each trick was checked against: [low, high)
    "openai": (openai.__version__, "3.57", "3.58"),
    "gradio": (gr.__version__, "6.31", "6.32"),
    "langsmith": (langsmith.__version__, "0.15", "0.16"),
}


@pytest.mark.parametrize("library", sorted(CHECKED))
def test_each_library_under_a_trick_is_a_version_the_trick_was_checked_against(library):
    installed, low, high = CHECKED[library]
    assert Version(low) <= Version(installed) < Version(high), (
        f"{library} {installed} is outside [{low}, {high}): re-check agent/perf/ (its module "
        f"for {library}), then move this range and the pin in pyproject.toml together"
    )


def test_the_openai_names_the_chunk_client_overrides_are_still_there():
    override = inspect.signature(AsyncAPIClient._process_response_data)
    assert list(override.parameters) == ["self", "data", "cast_to", "response"], (
        "openai changed _process_response_data: re-check agent/perf/openai_stream.py ChunkDicts"
    )
    assert ChunkDicts._process_response_data is not AsyncAPIClient._process_response_data
    options = inspect.signature(make_request_options).parameters
    for name in ("extra_headers", "extra_query", "extra_body", "timeout", "security"):
        assert name in options, f"make_request_options lost {name}: re-check PlainCompletions"


def test_plain_completions_sends_through_the_sdks_own_post_and_calls_its_hook():
    client = ChunkDicts(api_key="not-needed", base_url="http://127.0.0.1:9/v1", max_retries=0)
    calls: list[str] = []
    completions = PlainCompletions(client, on_request=lambda: calls.append("out"))
    assert callable(completions._post), "the SDK's resources lost _post: re-check PlainCompletions"
    assert ChunkDicts(api_key="x", base_url="http://127.0.0.1:9/v1").user_agent.startswith(
        "AsyncOpenAI/Python "
    )

    async def send() -> None:
        with pytest.raises(openai.APIConnectionError):
            await completions.create(model="m", messages=[], stream=True)
        await client.close()

    asyncio.run(send())
    assert calls == ["out"]


def test_langsmiths_override_still_takes_an_aio_to_thread_and_runs_in_place_untraced():
    assert "aio_to_thread" in inspect.signature(langsmith.set_runtime_overrides).parameters, (
        "langsmith changed set_runtime_overrides: re-check agent/perf/langsmith_inline.py"
    )
    langsmith_inline.install()
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="outside")
    ctx = contextvars.copy_context()
    ctx.run(var.set, "inside")

    async def default(*args, **kwargs):
        raise AssertionError("the thread hop ran while tracing is off")

    seen = asyncio.run(langsmith_inline.inline_unless_traced(default, ctx, var.get))
    assert seen == "inside"


def test_gradio_still_asks_a_block_for_its_config_with_an_optional_class():
    params = inspect.signature(gr.blocks.Block.get_config).parameters
    assert list(params) == ["self", "cls"], (
        "gradio changed Block.get_config: re-check agent/perf/gradio_config.py"
    )
    box = gr.Textbox(value="a", render=False)
    gradio_config.freeze_configs(SimpleNamespace(blocks={1: box}))  # type: ignore[arg-type]
    first = box.get_config()
    first["value"] = "changed by a caller"
    assert box.get_config()["value"] == "a"


def test_marking_matplotlib_absent_keeps_an_installed_one(monkeypatch):
    monkeypatch.delitem(sys.modules, "matplotlib", raising=False)
    matplotlib_absent.mark_matplotlib_absent()
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert sys.modules.get("matplotlib", "gone") is None
    else:
        assert sys.modules["matplotlib"] is not None


def test_the_pace_slows_only_past_its_full_rate_streams():
    pace = Pace()
    pace.open = FULL_RATE_STREAMS
    assert pace.interval() == MIN_INTERVAL_S
    pace.open = FULL_RATE_STREAMS * 100
    assert pace.interval() == MAX_INTERVAL_S
