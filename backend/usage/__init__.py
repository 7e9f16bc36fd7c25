"""Usage and budgets: one row per model call, rollups read fast, daily token budgets."""
