"""How texts are grouped into embedding requests: by an estimate of their tokens, not by their count.

An embedding server limits a request by tokens (TEI's `max_batch_tokens`, OpenAI's per-request token
cap), and one long chunk costs as much as many short ones, so a fixed count either wastes requests on
short texts or overflows the server on long ones. The estimate weighs characters by class, as a
multilingual subword vocabulary splits them: about 4 ASCII letters per token, 2 digits per token, most
punctuation a token of its own, and 0.6 tokens per Hangul syllable or CJK character. It stays within
30 % of the multilingual-e5 tokenizer on Korean, English, numbers and code
(tests/core/test_embed_batches.py compares), and runs at C speed (str.count/translate, no per-char loop).
"""

from __future__ import annotations

import string
from collections.abc import Sequence

SPECIAL_TOKENS = 2  # <s> … </s>
_DROP_PUNCT = str.maketrans("", "", string.punctuation)


def estimate_tokens(text: str) -> int:
    """Tokens a multilingual subword model is expected to feed for `text` (an estimate)."""
    n = len(text)
    ascii_chars = len(text.encode("ascii", "ignore"))
    digits = sum(text.count(d) for d in string.digits)
    punct = n - len(text.translate(_DROP_PUNCT))
    letters = ascii_chars - digits - punct
    est = 0.25 * letters + 0.5 * digits + 0.8 * punct + 0.6 * (n - ascii_chars)
    return int(est + 0.999) + SPECIAL_TOKENS


def token_batches(texts: Sequence[str], max_tokens: int, max_items: int) -> list[list[int]]:
    """Indices of `texts` in order, cut into batches of at most `max_tokens` estimated tokens and
    `max_items` texts. A text over the budget on its own gets a batch of its own (the server truncates it)."""
    if max_tokens < 1 or max_items < 1:
        raise ValueError("max_tokens and max_items must be positive")
    batches: list[list[int]] = []
    current: list[int] = []
    used = 0
    for i, text in enumerate(texts):
        cost = estimate_tokens(text)
        if current and (used + cost > max_tokens or len(current) >= max_items):
            batches.append(current)
            current, used = [], 0
        current.append(i)
        used += cost
    if current:
        batches.append(current)
    return batches
