"""datasources tables."""
