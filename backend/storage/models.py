"""storage tables."""
