"""Query-focused snippets: the part of a chunk where the query's terms are, not always its start.

The query's lexical tokens (the ones the lexical lane searched with) are found in the chunk text by
plain string search, so the chunk is never analyzed a second time: Korean morphemes and Hangul bigrams
(marker stripped) are literal substrings of the text (`낮잠` in `낮잠을`), Latin words are matched at a
word start (`nap` in `naps`, not in `snap`). Linear in the chunk's length for a bounded query.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from hippo_core.index.tokenize import BIGRAM_MARKER

ELLIPSIS = "…"
BIGRAM_WEIGHT = 0.25
"""Bigrams are a recall aid: a window with the query's words beats one with only their syllable pairs."""

_MAX_TERMS = 64  # a query is ≤ 1024 bytes; more terms than this add nothing to the choice of a window
_HANGUL_HAN = re.compile("[\uac00-\ud7a3\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_WORD_START = (
    r"(?<![^\W_\uac00-\ud7a3])"  # not right after a letter or digit: `nap` matches in `naps`, not in `snap`
)
_SENTENCE_END = re.compile(r"[.!?。？！]\s|\n")
_SPACE = re.compile(r"\s")


def _terms(query_tokens: Iterable[str]) -> dict[str, float]:
    """Each distinct term (case-folded, bigram marker stripped) with its weight."""
    out: dict[str, float] = {}
    for token in query_tokens:
        bigram = token.startswith(BIGRAM_MARKER)
        term = token.removeprefix(BIGRAM_MARKER).casefold()
        if term:
            out[term] = max(out.get(term, 0.0), BIGRAM_WEIGHT if bigram else 1.0)
        if len(out) >= _MAX_TERMS:
            break
    return out


@functools.lru_cache(maxsize=256)
def _pattern(terms: tuple[str, ...]) -> re.Pattern[str]:
    """One alternation of escaped literals, longest first (no nested quantifiers: linear time).

    Terms that start with Hangul or Han match anywhere, the others at a word start: one lookbehind in
    front of all of those, not one per term, and outside the case-insensitive group (a case-insensitive
    Hangul range costs ~2 ms to compile, once per query). At any position only one of the two groups can
    match (a term's first character is Hangul/Han or not), so this finds what one case-insensitive
    lookbehind per term found (`tests/search/test_fast_paths.py` compares the two). Cached: a search
    builds the same pattern for each of its hits' snippets.
    """
    ordered = sorted(terms, key=lambda t: (-len(t), t))
    hangul = [re.escape(t) for t in ordered if _HANGUL_HAN.match(t)]
    latin = [re.escape(t) for t in ordered if not _HANGUL_HAN.match(t)]
    alts = ([f"(?i:{'|'.join(hangul)})"] if hangul else []) + (
        [f"{_WORD_START}(?i:{'|'.join(latin)})"] if latin else []
    )
    return re.compile("|".join(alts))


def term_matches(text: str, query_tokens: Iterable[str]) -> list[tuple[int, str]]:
    """(offset, term) of every query-term occurrence in `text`, in text order."""
    terms = _terms(query_tokens)
    if not terms or not text:
        return []
    return [(m.start(), m.group(0).casefold()) for m in _pattern(tuple(terms)).finditer(text)]


def best_window(
    matches: list[tuple[int, str]], weights: dict[str, float], width: int
) -> tuple[int, int] | None:
    """(start, end) of the matches in the `width`-char window whose distinct terms weigh most (two
    pointers over the matches; ties keep the earliest window). None when nothing matched."""
    if not matches:
        return None
    counts: dict[str, int] = {}
    score, best_score, best = 0.0, -1.0, (matches[0][0], matches[0][0] + len(matches[0][1]))
    left = 0
    for pos, term in matches:
        end = pos + len(term)
        counts[term] = counts.get(term, 0) + 1
        if counts[term] == 1:
            score += weights.get(term, BIGRAM_WEIGHT)
        while end - matches[left][0] > width:
            gone = matches[left][1]
            counts[gone] -= 1
            if counts[gone] == 0:
                score -= weights.get(gone, BIGRAM_WEIGHT)
            left += 1
        if score > best_score + 1e-9:
            best_score, best = score, (matches[left][0], end)
    return best


def _window_start(text: str, first: int, last_end: int, budget: int) -> int:
    """Where the snippet starts: the start of the first match's sentence when the window still fits,
    else a space that roughly centres the matches."""
    slack = max(0, budget - (last_end - first))
    floor = max(0, first - slack)
    start = -1
    for m in _SENTENCE_END.finditer(text, floor, first):
        start = m.end()
    if start >= 0:
        return start
    if floor == 0:
        return 0
    centred = max(0, first - slack // 2)
    space = _SPACE.search(text, centred, first)
    return space.end() if space else centred


def _fill_back(text: str, floor: int, start: int) -> int:
    """The earliest sentence start (else word start) in [floor, start]: the tail shown uses all the room."""
    m = _SENTENCE_END.search(text, max(floor, 0), start)
    if m:
        return m.end()
    space = _SPACE.search(text, max(floor, 0), start)
    return space.end() if space else start


def query_snippet(text: str, query_tokens: Iterable[str], max_chars: int = 240) -> str:
    """At most `max_chars` characters of `text` around its densest run of query terms (whitespace
    runs shown as one space), with `…` where it was cut; the chunk's start when no term occurs."""
    text = text.strip()
    if len(text) <= max_chars:
        return " ".join(text.split())
    budget = max_chars - 2 * len(ELLIPSIS)
    weights = _terms(query_tokens)
    window = best_window(term_matches(text, weights), weights, budget)
    start = 0 if window is None else min(_window_start(text, *window, budget), window[0])
    if start and len(text) - start < max_chars - len(ELLIPSIS):  # near the end: fill the room before
        start = _fill_back(text, len(text) - (max_chars - len(ELLIPSIS)), start)
    lead = ELLIPSIS if start > 0 else ""
    room = max_chars - len(lead)
    if len(text) - start <= room:
        return lead + " ".join(text[start:].split())
    cut = start + room - len(ELLIPSIS)
    space = text.rfind(" ", start + room // 2, cut + 1)
    end = space if space > start else cut
    return lead + " ".join(text[start:end].split()) + ELLIPSIS
