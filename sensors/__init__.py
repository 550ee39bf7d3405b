"""Sensors, one file per domain: the inbox (ingest), edited notes (index), new source copies (compile),
ticked approvals (publish)."""
