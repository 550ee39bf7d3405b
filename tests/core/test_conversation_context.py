"""Conversation context on a hand-computed two-conversation example."""

from __future__ import annotations

import pytest

from hippo_core.ranking.conversation_context import (
    Place,
    named_speaker,
    speaker_label,
    turn_scores,
    with_context,
)
from hippo_core.ranking.ranking import CONVERSATION_CONTEXT, RankingParams

# Conversation A: turns 0-3; conversation B: turn 1. "a1x" is the exchange row of turn A1 (same place).
PLACES = {
    "a0": Place("A", 0),
    "a1": Place("A", 1),
    "a1x": Place("A", 1),
    "a3": Place("A", 3),
    "b1": Place("B", 1),
}
SCORES = {"a0": 0.2, "a1": 0.5, "a1x": 0.9, "a3": 0.4, "b1": 1.0, "note": 0.7}


def test_a_turn_is_scored_by_its_best_chunk() -> None:
    best = turn_scores(SCORES, PLACES)
    assert best == {Place("A", 0): 0.2, Place("A", 1): 0.9, Place("A", 3): 0.4, Place("B", 1): 1.0}


def test_neighbours_and_reply_add_to_a_turn() -> None:
    out = with_context(SCORES, PLACES, neighbour_weight=0.5, reply_weight=0.1)
    # a0: its reply A1 scores 0.9 → 0.2 + 0.5·0.9 + 0.1·0.9
    assert out["a0"] == pytest.approx(0.2 + 0.45 + 0.09)
    # a1 and a1x: neighbours A0 (0.2) and A2 (not drawn: 0) → + 0.5·0.2, no reply
    assert out["a1"] == pytest.approx(0.5 + 0.1) and out["a1x"] == pytest.approx(0.9 + 0.1)
    # a3: A2 and A4 were not drawn → unchanged
    assert out["a3"] == pytest.approx(0.4)
    # b1 sits at position 1 of another conversation: A's turns are not its neighbours
    assert out["b1"] == pytest.approx(1.0)
    # a chunk with no place (a note) keeps its score
    assert out["note"] == pytest.approx(0.7)


def ranked(scores: dict[str, float]) -> list[str]:
    return [c for c, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))]


def test_context_can_lift_the_turn_a_question_was_answered_in() -> None:
    before = ranked(SCORES)
    after = ranked(with_context(SCORES, PLACES, neighbour_weight=0.5, reply_weight=0.1))
    assert before.index("a0") > before.index("a3") and after.index("a0") < after.index("a3")
    assert after.index("a0") < after.index("note")  # 0.74 > 0.7


def test_zero_weights_change_nothing() -> None:
    assert with_context(SCORES, PLACES, 0.0, 0.0) == SCORES
    assert with_context(SCORES, PLACES, 0.0, 0.0, {"a0": "Jon"}, "Jon", 0.0) == SCORES


def test_a_speaker_is_the_label_a_turn_opens_with_else_its_role() -> None:
    assert speaker_label("assistant: Gina: I opened the store.", "assistant") == "Gina"
    assert speaker_label("user: Mary Ann Lee: hi", "user") == "Mary Ann Lee"
    assert speaker_label("user: how do I rebase?", "user") == "user"
    assert speaker_label("user: gina: lower case is no label", "user") == "user"
    assert speaker_label("no role prefix at all") is None


def test_only_a_speaker_of_two_turns_named_alone_counts() -> None:
    seen = ["Jon", "Jon", "Gina", "Gina", "Note"]
    assert named_speaker("What did Jon's studio offer?", seen) == "Jon"
    assert named_speaker("What did Jon tell Gina?", seen) is None  # two named: no preference
    assert named_speaker("What is in the note?", seen) is None  # "Note" opened one turn only
    assert named_speaker("What did Mary say?", ["Mary Ann", "Mary Ann"]) is None  # every word must be named


def test_the_named_speakers_turns_are_multiplied_after_the_context() -> None:
    speakers = {"a0": "Jon", "a1": "Gina", "a1x": "Gina", "a3": "Jon"}
    out = with_context(SCORES, PLACES, 0.5, 0.1, speakers, "Jon", speaker_boost=0.2)
    assert out["a0"] == pytest.approx((0.2 + 0.45 + 0.09) * 1.2)
    assert out["a3"] == pytest.approx(0.4 * 1.2) and out["a1"] == pytest.approx(0.5 + 0.1)
    assert out["b1"] == pytest.approx(1.0) and out["note"] == pytest.approx(0.7)  # no speaker known


def test_without_conversation_context_turns_every_context_weight_off() -> None:
    on = RankingParams()
    assert all(getattr(on, name) > 0 for name in CONVERSATION_CONTEXT)  # the shipped defaults use the stage
    off = on.without_conversation_context()
    assert all(getattr(off, name) == 0 for name in CONVERSATION_CONTEXT)
    assert off.model_dump(exclude=set(CONVERSATION_CONTEXT)) == on.model_dump(
        exclude=set(CONVERSATION_CONTEXT)
    )
    fields = {n for n in RankingParams.model_fields if n.startswith("conversation_")}
    assert fields == set(CONVERSATION_CONTEXT)  # a new context weight must be listed to be switched off
