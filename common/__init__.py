"""The ground floor both processes (agent/, backend/) and the launcher (agent_chat/) stand on:
nothing here imports any of them (pyproject.toml, [tool.importlinter])."""
