"""Conversation context: a turn is judged with its neighbours, not alone.

In a conversation the evidence for a question is often a turn that does not repeat the question's words:
"What did Caroline research?" is answered by "Researching adoption agencies!" one turn after Melanie asked
"what have you been up to?". A turn's neighbours say what it is about. So, after fusion, every candidate
turn at place p of its conversation gains from the best fused score at p−1 and p+1:

    score(p) + neighbour_weight × max(S(p−1), S(p+1)) + reply_weight × S(p+1)

where S(q) is the best fused score of any candidate chunk of the turn at q (its message and its exchange
row), 0 when no lane drew it. The reply term counts the next turn again: a reply that matches the question
points back at what it replies to. Turns that no lane drew are not added: their own score is 0, so only a
neighbour's would rank them. Chunks that are not turns (notes, documents, segments) keep their score.

Speakers: "What did Jon tell Gina about the opening?" is answered by a turn of Jon's. A turn's speaker is the
label its text opens with ("Jon: …", as transcripts and LoCoMo write it), else its role; when the question
names exactly one of the candidate turns' speakers, that speaker's turns are multiplied by 1 + speaker_boost.
A speaker every turn shares a name with (one person talking to an assistant) changes no order.

Weights are chosen leaving one LoCoMo conversation out (`python -m eval.locomo_context`), see docs/search.md and CHANGELOG.md.
Pure: the caller passes each candidate's place.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import NamedTuple

# A speaker label at the start of a turn: one to three capitalised words, then ":" (bounded, anchored: linear).
_LABEL = re.compile(r"([A-Z][\w.'-]{0,30}(?: [A-Z][\w.'-]{0,30}){0,2}):\s")
_WORD = re.compile(r"\w+")


class Place(NamedTuple):
    """Where a chunk sits: its conversation and the turn's position in it (0-based)."""

    conversation: str
    position: int


def turn_scores(scores: Mapping[str, float], places: Mapping[str, Place]) -> dict[Place, float]:
    """S: the best score of any candidate chunk of each turn."""
    best: dict[Place, float] = {}
    for chunk, score in scores.items():
        place = places.get(chunk)
        if place is not None and score > best.get(place, float("-inf")):
            best[place] = score
    return best


def speaker_label(text: str, role: str | None = None) -> str | None:
    """Who speaks in a turn: the label its text opens with (after the `role: ` prefix conversation rows
    carry), else the role."""
    if role and text.startswith(f"{role}: "):
        text = text[len(role) + 2 :]
    match = _LABEL.match(text[:100])
    return match.group(1) if match else role


def named_speaker(query: str, speakers: Iterable[str | None]) -> str | None:
    """The one speaker the query names (every word of the label, case-folded, as a word of the query);
    None when it names none or several. `speakers` has one entry per candidate turn: a label that opens
    only one of them is more likely a "Note:" than a person, and does not count."""
    words = set(_WORD.findall(query.casefold()))
    seen = Counter(s for s in speakers if s)
    named = {s for s, n in seen.items() if n > 1 and all(w in words for w in _WORD.findall(s.casefold()))}
    return named.pop() if len(named) == 1 else None


def with_context(
    scores: Mapping[str, float],
    places: Mapping[str, Place],
    neighbour_weight: float,
    reply_weight: float,
    speakers: Mapping[str, str | None] | None = None,
    named: str | None = None,
    speaker_boost: float = 0.0,
) -> dict[str, float]:
    """Each chunk's score with its turn's neighbours added, then × (1 + speaker_boost) when the turn's
    speaker (`speakers`, by chunk) is the one the query `named` (formulas in the module docstring); chunks
    without a place unchanged. With every weight 0 the scores are returned as they are."""
    boost = speaker_boost if named is not None and speakers else 0.0
    if neighbour_weight == 0 and reply_weight == 0 and boost == 0:
        return dict(scores)
    best = turn_scores(scores, places)
    out: dict[str, float] = {}
    for chunk, score in scores.items():
        place = places.get(chunk)
        if place is None:
            out[chunk] = score
            continue
        before = best.get(Place(place.conversation, place.position - 1), 0.0)
        after = best.get(Place(place.conversation, place.position + 1), 0.0)
        score = score + neighbour_weight * max(before, after) + reply_weight * after
        if boost and speakers is not None and speakers.get(chunk) == named:
            score *= 1.0 + boost
        out[chunk] = score
    return out
