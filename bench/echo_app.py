"""A bare Gradio echo with the agent's endpoint shape, the baseline of bench/agent_ttft.py.

Same host layout (FastAPI, Gradio mounted at /api/agent/gradio), same ChatInterface options
(multimodal, the same additional inputs, api_name="chat", unlimited concurrency, the same queue
slots), and a streaming fn that yields 100 tokens 25 ms apart, like the fake LLM behind the agent.
No backend, no model, no checkpoints, no authentication.

    python bench/echo_app.py --port 7861
"""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import AsyncIterator
from typing import Any

import gradio as gr
import uvicorn
from fastapi import FastAPI

GRADIO_PATH = "/api/agent/gradio"
TOKENS = 100
DELAY_S = 0.025
QUEUE_SLOTS = 1000  # as agent/app.py


def build_app() -> FastAPI:
    async def echo(
        message: dict[str, Any], history: list[Any], conversation_id: str, action: str, focus: str
    ) -> AsyncIterator[list[dict[str, Any]]]:
        text = ""
        for i in range(TOKENS):
            if i:
                await asyncio.sleep(DELAY_S)
            text += f"t{i} "
            yield [{"role": "assistant", "content": text, "metadata": {}}]

    demo = gr.ChatInterface(
        echo,
        multimodal=True,
        additional_inputs=[
            gr.Textbox(label="conversation_id", value=""),
            gr.Textbox(label="action", value=""),
            gr.Textbox(label="focus", value=""),
        ],
        api_name="chat",
        concurrency_limit=None,
        analytics_enabled=False,
        save_history=False,
    )
    demo.max_threads = QUEUE_SLOTS
    demo.queue(default_concurrency_limit=None, max_size=None)
    app = FastAPI()

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    return gr.mount_gradio_app(app, demo, path=GRADIO_PATH, ssr_mode=False, footer_links=[])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=7861)
    args = parser.parse_args()
    uvicorn.run(build_app(), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
