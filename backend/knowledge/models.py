"""knowledge tables."""
