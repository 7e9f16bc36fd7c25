"""storage tables: none. Objects live in the configured store (see store.py), not in Postgres."""
