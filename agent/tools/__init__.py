"""The agent's tools (names and arguments fixed by CONTRACT.md), built over one BackendClient.

`agent.tools.names` is the catalogue (name, card title, confirmation line; light, no LangChain)
and `agent.tools.registry` pairs each entry with its builder (`build_tools`). The other modules
hold the tools, one per backend domain.

Each tool reads the user from its injected `runtime.context` (agent.context.Context), calls the
backend with the service JWT plus X-On-Behalf-Of, and returns a compact JSON-serialisable dict.
A BackendError (403, 404, 409...) propagates for the agent's middleware to turn into a safe
tool error; arguments are validated by each tool's Pydantic args_schema before any HTTP call.
"""
