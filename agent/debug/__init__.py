"""Debug records: every model call of a turn, as sent and received, without credentials."""
