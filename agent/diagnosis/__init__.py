"""Evidence-based diagnosis (`options.mode = "diagnose"`, CONTRACT.md "Diagnosis"): one budgeted
`create_agent` run over three evidence tools behind a progress protocol, whose final text must
be a strict, evidence-citing DiagnosisDraft.

Modules by role: `draft` (the schema and its strict parser), `ledger` (the run's evidence and
the progress protocol), `budget` (model rounds, tokens), `envelope` (the
tools the model sees), `projection` (what an observation may say), `middleware` (where the
checks run), `prompt`, `request` (the model's input), `previous` (the last diagnosis, frozen),
`run` (one run, end to end), `session` (the chat mode), `summary` (the outcome in words).
"""
