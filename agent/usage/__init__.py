"""Usage: every model call of a run counted once, and the user's daily token budget enforced
(CONTRACT.md, "Usage and budgets"). `usage_hooks(client)` is the run hook factory."""

from agent.usage.hook import UsageHooks, usage_hooks

__all__ = ["UsageHooks", "usage_hooks"]
