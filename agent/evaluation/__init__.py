"""`agent-chat eval`: how well the configured model picks the agent's tools, measured on a case
file through the real agent graph and the real backend, without changing the platform.

cases.py (the file, checked) -> runner.py (one fresh conversation a case; sandbox.py answers
the write tools) -> report.py (text and JSON). The CLI glue is agent_chat/evaluate.py.
"""
