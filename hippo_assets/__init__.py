"""The asset graph, one folder per domain (= asset group); `definitions.py` merges the domains' Definitions."""
