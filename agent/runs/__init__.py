"""Runs: the one skeleton every turn goes through, and the kinds of run behind it."""
