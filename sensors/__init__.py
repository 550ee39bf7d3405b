"""Sensors: the inbox sensor (and, later, the approvals sensor)."""
