"""Sensors, one file per domain: the inbox (ingest), new source copies (compile), ticked approvals (publish)."""
