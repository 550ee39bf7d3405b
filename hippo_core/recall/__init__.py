"""Prompt-time recall: the router's scoring, the skill lane and the quoted context a hook adds (pure)."""
