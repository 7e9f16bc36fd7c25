"""oplogs tables."""
