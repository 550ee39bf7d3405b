"""Agents' memory rules: work-memory cursors and events, the ghost layer's ranking and promotion."""
