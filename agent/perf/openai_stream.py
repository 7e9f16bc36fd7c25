"""The OpenAI SDK's streamed chat call without its per-chunk models and per-request transform.

Saves: about a tenth of the agent's CPU per turn under load (chunk models: 7.6 % at 25
conversations; the request transform: 2 ms a call, 4.7-9.5 % of the main thread).
Bench: `uv run python bench/agent_load.py --levels 25,50 --targets echo,agent1` (agent CPU per
turn) with `--profile DIR` to see `_process_response_data` and `_transform` in the samples.
Remove when: the SDK stops building a model per streamed chunk or ChatOpenAI stops dumping them
back to dicts, or when the pin's upper bound (pyproject.toml, `openai`) has to move and
tests/agent/unit/test_perf_tricks.py no longer finds the private names this overrides
(`AsyncOpenAI._process_response_data`, `openai._base_client.make_request_options`,
`AsyncCompletions._post`); tests/agent/test_model_client.py checks that ChatOpenAI makes
exactly the same of a stream, and the provider receives the same body, as with the SDK's own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import openai
from openai._base_client import make_request_options
from openai._streaming import AsyncStream
from openai._utils import is_given
from openai.resources.chat.completions import AsyncCompletions
from openai.types.chat import ChatCompletion, ChatCompletionChunk


class ChunkDicts(openai.AsyncOpenAI):
    """The OpenAI client, with each streamed chat chunk left as the JSON object it arrived as.

    The SDK builds a `ChatCompletionChunk` model of every chunk (a recursive, type-inspecting
    construction), and ChatOpenAI's stream turns each one straight back into a dict
    (`model_dump`) before it reads it: a tenth of the agent's CPU per turn under load. A dict
    chunk is what ChatOpenAI reads anyway, so it gets the provider's own. Everything else
    (requests, SSE decoding, error events, other responses) is the SDK's, unchanged. Only
    `chat.completions.create(stream=True)` is used: the SDK's `beta` stream helpers, which
    accumulate chunk models, are not (ChatOpenAI takes them only for `response_format`).
    """

    @property
    def user_agent(self) -> str:
        return f"AsyncOpenAI/Python {openai.__version__}"  # the SDK's, not this class's name

    def _process_response_data(self, *, data: Any, cast_to: Any, response: Any) -> Any:
        if cast_to is ChatCompletionChunk and isinstance(data, dict):
            return data
        return super()._process_response_data(data=data, cast_to=cast_to, response=response)


_JSON = (dict, list, str, int, float, bool, type(None))
_OPTIONS = ("extra_headers", "extra_query", "extra_body", "timeout")  # create()'s, not the body's


def _nothing() -> None:
    return None


class PlainCompletions(AsyncCompletions):
    """`chat.completions`, whose streamed `create` sends ChatOpenAI's payload as it is.

    The SDK passes every request body through its TypedDict transform (a recursive walk of the
    whole history and every tool schema, looking for aliases and formats): under load about a
    twentieth of the agent's CPU. No chat-completions parameter has an alias or a format, so on
    a body of plain JSON values (what ChatOpenAI builds) the transform returns what it was given,
    and this sends that directly, with the SDK's own request options, path and stream class.
    Any other call (not streamed, or a value that is not plain JSON) is the SDK's, unchanged.

    Either way `on_request` is called first: the agent's graph passes the end of the run's
    start (agent/admission.py `started`), so a request going out frees the run's start slot.
    """

    def __init__(self, client: openai.AsyncOpenAI, *, on_request: Callable[[], None] = _nothing):
        super().__init__(client)
        self._on_request = on_request

    async def create(self, **params: Any) -> Any:
        self._on_request()
        if params.get("stream") is not True or not all(
            isinstance(v, _JSON) for k, v in params.items() if k not in _OPTIONS and is_given(v)
        ):
            return await super().create(**params)
        options = {k: params.pop(k) for k in _OPTIONS if k in params}
        body = {k: v for k, v in params.items() if is_given(v)}
        return await self._post(
            "/chat/completions",
            body=body,
            options=make_request_options(
                extra_headers=options.get("extra_headers"),
                extra_query=options.get("extra_query"),
                extra_body=options.get("extra_body"),
                timeout=options.get("timeout", openai.NOT_GIVEN),
                security={"bearer_auth": True},
            ),
            cast_to=ChatCompletion,
            stream=True,
            stream_cls=AsyncStream[ChatCompletionChunk],
        )
