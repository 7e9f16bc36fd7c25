"""The kinds of run, side by side: each builds its input and runs its engine (agent/runs/skeleton.py
owns the lifecycle around them)."""
