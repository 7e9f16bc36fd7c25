"""agent.perf.gradio_config.freeze_configs: each block's config, computed once when the app is
built, is what Gradio would compute every time, and each session's copy of it is its own."""

from __future__ import annotations

import gradio as gr
from gradio.state_holder import SessionState

from agent.app import GRADIO_PATH, build_app
from agent.config import Settings


def _mounted() -> gr.Blocks:
    # Built in a running event loop (the tests are async), as the app is: out of one, Gradio
    # makes an event loop of its own for its locks and never closes it.
    app = build_app(Settings(database_url="postgresql://unused/db"))
    mount = next(r for r in app.routes if getattr(r, "path", None) == GRADIO_PATH)
    return mount.app.get_blocks()  # type: ignore[attr-defined]


async def test_every_block_config_is_what_gradio_computes() -> None:
    demo = _mounted()
    assert len(demo.blocks) > 10
    for block in demo.blocks.values():
        assert "get_config" in vars(block), block  # computed once, when the app was built
        assert block.get_config() == type(block).get_config(block)


async def test_sessions_and_streamed_values_keep_their_configs_their_own() -> None:
    demo = _mounted()
    state = demo.chatbot_state._id  # type: ignore[attr-defined]  # /chat's second output
    chatbot = demo.chatbot._id  # type: ignore[attr-defined]
    one, two = SessionState(demo), SessionState(demo)
    expected = {k: {**v, "props": dict(v["props"])} for k, v in two.config_values.items()}

    # What Gradio does with every value a run yields, and to the configs it gets.
    one[state] = [{"role": "assistant", "content": "t1"}]
    one[state] = [{"role": "assistant", "content": "t1 t2"}]
    one.config_values[state]["props"].pop("name")
    one._update_value_in_config(chatbot, [{"role": "user", "content": "mine"}])

    assert one.state_data[state] == [{"role": "assistant", "content": "t1 t2"}]
    assert one.config_values[chatbot]["props"]["value"] == [{"role": "user", "content": "mine"}]
    assert two.config_values == expected
    two[state] = []
    assert two.config_values == expected
    assert SessionState(demo).config_values == expected
    assert demo.chatbot_state.get_config()["name"] == "state"  # type: ignore[attr-defined]
