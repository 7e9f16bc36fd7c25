"""Schedules: a prompt, a YAML workflow or a health sweep that runs by itself, as its owner."""
