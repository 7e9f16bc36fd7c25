"""The base of the agent's own LangChain callback handlers (debug recorder, usage counter and
guard): they hear model events only, inline.

LangChain awaits every handler on every event: a turn has dozens of chain events (each graph
node and middleware step) and one event per streamed token, and a handler that is not inline
gets a task of its own per event, gathered. These handlers never wait on anything, so they run
inline and are deaf to all but model events.
"""

from __future__ import annotations

from langchain_core.callbacks import AsyncCallbackHandler


class ModelEvents(AsyncCallbackHandler):
    run_inline = True
    ignore_chain = True
    ignore_agent = True  # tool events come under it too
    ignore_retriever = True
    ignore_retry = True
    ignore_custom_event = True
