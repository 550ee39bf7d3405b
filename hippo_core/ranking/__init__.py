"""Ranking maths: fusion and its parameters, adaptive share, conversation context, evidence, snippets, rerank order, calibration."""
