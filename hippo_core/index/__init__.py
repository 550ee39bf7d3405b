"""Turning text into an index: tokenizing (kiwipiepy + Hangul bigrams), chunking, BM25 maths and segments, embedding batches."""
