"""Temporal facts (issue 24, seed S4 §3): the fact model, dates with a precision, the resolution rules
(MERGE / COEXIST / SUPERSEDE, deterministic first), the deterministic reader and the review lines.

Pure: no files, no network. The store is `hippo_resources.fact_store.FactStore`.
"""
