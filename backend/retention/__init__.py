"""Checkpoint retention: a periodic job that keeps LangGraph's checkpoint tables bounded."""
