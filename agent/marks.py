"""The marks the agent's middleware leaves for whoever reads a run (the stream, the evaluation):
a custom callback event and a flag in a message's response metadata.

They sit under both the middleware (agent/middleware.py, which leaves them) and the stream
(agent/stream/, which reads them), so the stream never imports the middleware.
"""

from __future__ import annotations

from langchain_core.messages import AIMessage, BaseMessage

RETRY_EVENT = "model_retry"  # custom callback event: drop the text of the failed attempt
TOOL_BUDGET_MARK = "tool_budget_exhausted"  # response_metadata of the AI message ending such a run


def ends_out_of_tool_budget(message: BaseMessage) -> bool:
    """Whether `message` is the AI message RunBudget ends a run with."""
    return isinstance(message, AIMessage) and bool(message.response_metadata.get(TOOL_BUDGET_MARK))
