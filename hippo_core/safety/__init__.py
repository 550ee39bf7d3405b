"""Untrusted text: secret and injection scanners, the scrubber, text validation (all linear time)."""
