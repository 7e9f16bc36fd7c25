"""Debug records: every model call of a turn, as sent and received (owner reads, agent writes)."""
