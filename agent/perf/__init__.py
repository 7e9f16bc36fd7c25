"""The performance tricks: each buys speed by reaching into a library (a subclass of private SDK
code, a patch of a framework's method, a process-wide setting), and each lives here, one module
a trick, not inside the domain code (STYLE.md, "Performance tricks").

Every module says in its first lines what it saves, the bench command that shows it and when
to remove it. Where private library code is touched, pyproject.toml pins the library with an
upper bound and tests/agent/unit/test_perf_tricks.py (LangGraph's: test_perf_langgraph.py)
fails loudly when the library changes under the trick. docs/architecture.md, "Per-turn cost",
lists them with their figures.

- openai_stream.py   the OpenAI SDK: chunks left as dicts, the request transform skipped
- langsmith_inline.py LangSmith's `traceable` set-up run in place while tracing is off
- gradio_config.py   Gradio block configs computed once
- matplotlib_absent.py Gradio's `import matplotlib` failing at once
- pace.py            the stream's update interval, growing with the open streams
- delta_state.py     the agent's messages checkpointed as deltas (LangGraph's private reducer)
- delta_replay.py    a thread's delta history read from what was last read (`_DeltaSnapshot`)
- saver_pool.py      the Postgres checkpointer's cursors from its pool without its lock
The process-wide garbage-collector setting is shared with the backend: common/heap.py.
"""
