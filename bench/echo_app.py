"""A bare Gradio echo with the agent's endpoint shape, the baseline of bench/agent_ttft.py.

Same host layout (FastAPI, Gradio mounted at /api/agent/gradio), same ChatInterface options
(multimodal, the same additional inputs, api_name="chat", unlimited concurrency, the same queue
slots), and a streaming fn that yields 100 tokens 25 ms apart, like the fake LLM behind the agent.
No backend, no model, no checkpoints, no authentication.

    python bench/echo_app.py --port 7861 [--tokens 100] [--delay-ms 25] [--first-delay-ms 0]

bench/agent_load.py runs it at the fake model's pace there (a first-token delay, then its rate).
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


def build_app(
    tokens: int = TOKENS, delay_s: float = DELAY_S, first_delay_s: float = 0.0
) -> FastAPI:
    async def echo(
        message: dict[str, Any], history: list[Any], conversation_id: str, action: str, focus: str
    ) -> AsyncIterator[list[dict[str, Any]]]:
        text = ""
        if first_delay_s:
            await asyncio.sleep(first_delay_s)
        for i in range(tokens):
            if i:
                await asyncio.sleep(delay_s)
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
    parser.add_argument("--tokens", type=int, default=TOKENS)
    parser.add_argument("--delay-ms", type=float, default=DELAY_S * 1000)
    parser.add_argument("--first-delay-ms", type=float, default=0.0)
    args = parser.parse_args()
    app = build_app(args.tokens, args.delay_ms / 1000, args.first_delay_ms / 1000)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
