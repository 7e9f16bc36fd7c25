"""YAML workflows (mode `yaml`): definitions from the backend, matching, sandboxed templates,
and the step runner. The backend owns the definitions' schema and validates the files."""
