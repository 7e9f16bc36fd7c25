"""The agent's tools (names and arguments fixed by CONTRACT.md), built over one BackendClient.

The catalogue (name, argument model, card titles, confirmation line) is common/tools.py, shared
with the backend and the browser; `agent.tools.names` is the agent's view of it and
`agent.tools.registry` pairs each entry with its builder (`build_tools`). `agent.tools.calls`
holds the one check of a call's arguments and the one way to run a tool outside the graph. The
other modules hold the tools, one per backend domain.

Each tool reads the user from its injected `runtime.context` (agent.context.Context), calls the
backend with the service JWT plus X-On-Behalf-Of, and returns a compact JSON-serialisable dict.
A BackendError (403, 404, 409...) propagates for the agent's middleware to turn into a safe
tool error; arguments are checked against the catalogue's model before any HTTP call.
"""
