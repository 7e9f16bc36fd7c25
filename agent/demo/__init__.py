"""The built-in offline demo model's logic: routing messages to tools and summarising results."""
