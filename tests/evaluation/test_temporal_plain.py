"""eval/temporal_plain.py: plain BM25 over a question's sessions, by session and by turn, with the metrics of
eval/temporal.py; an `asof` probe leaves the sessions dated after `ku.as_of` out."""

from __future__ import annotations

import json
from pathlib import Path

from eval import temporal_plain


def _session(folder: Path, date: str, sid: str, turns: list[tuple[str, str]]) -> None:
    body = "".join(f"## Turn {n:02d} - {role}\n\n{text}\n\n" for n, (role, text) in enumerate(turns, 1))
    note = f"---\ntype: conversation\ndate: {date}\nsession: {sid}\n---\n\n# Chat {date} ({sid})\n\n{body}"
    (folder / f"{date}-{sid}.md").write_text(note, encoding="utf-8")


def _dataset(tmp_path: Path) -> Path:
    """One KU question (postcards: 17 in August, 25 in November) and one TR question whose two words are
    each twice in its evidence session, in two turns, and once each in one turn of another session."""
    ku, tr = tmp_path / "vault" / "ku1", tmp_path / "vault" / "tr1"
    ku.mkdir(parents=True)
    tr.mkdir(parents=True)
    _session(
        ku,
        "2023-08-10",
        "s01",
        [("user", "I have added 17 postcards to my collection."), ("assistant", "Nice.")],
    )
    _session(
        ku, "2023-09-01", "s02", [("user", "Tell me about sourdough bread."), ("assistant", "Flour, water.")]
    )
    _session(ku, "2023-11-20", "s03", [("user", "Now I have added 25 postcards!"), ("assistant", "Great.")])
    _session(
        tr,
        "2023-03-01",
        "s01",
        [("user", "Tomatoes, tomatoes planted."), ("assistant", "A greenhouse, greenhouse.")],
    )
    _session(
        tr, "2023-03-05", "s02", [("user", "Tomatoes in a greenhouse?"), ("assistant", "Water them daily.")]
    )
    for day, sid, words in (
        ("07", "s03", "bike chain"),
        ("09", "s04", "sourdough flour"),
        ("11", "s05", "jazz vinyl"),
    ):
        _session(tr, f"2023-03-{day}", sid, [("user", f"My {words}."), ("assistant", "Noted.")])
    questions = [
        {
            "qid": "ku1",
            "question_type": "knowledge-update",
            "abstention": False,
            "question": "How many postcards have I added?",
            "now": "2023-12-01T10:00",
            "vault_dir": "vault/ku1",
            "evidence_sessions": ["s01", "s03"],
            "ku": {"latest": "s03", "superseded": ["s01"], "as_of": "2023-09-30T23:59"},
        },
        {
            "qid": "tr1",
            "question_type": "temporal-reasoning",
            "abstention": False,
            "question": "When did I plant tomatoes for the greenhouse?",
            "now": "2023-04-01T10:00",
            "vault_dir": "vault/tr1",
            "evidence_sessions": ["s01"],
        },
        {
            "qid": "x",
            "question_type": "temporal-reasoning",
            "abstention": True,
            "question": "?",
            "now": "2023",
        },
    ]
    (tmp_path / "questions.jsonl").write_text(
        "".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8"
    )
    sessions = [
        {"qid": qid, "session": p.stem.rsplit("-", 1)[-1], "datetime": p.stem[:10] + "T12:00"}
        for qid, folder in (("ku1", ku), ("tr1", tr))
        for p in sorted(folder.glob("*.md"))
    ]
    (tmp_path / "sessions.jsonl").write_text(
        "".join(json.dumps(s) + "\n" for s in sessions), encoding="utf-8"
    )
    return tmp_path


def test_a_turn_is_the_text_under_its_heading_and_a_session_the_whole_body() -> None:
    note = (
        "---\ndate: 2023-01-01\n---\n\n# Chat\n\n## Turn 01 - user\n\nhello\n\n## Turn 02 - assistant\n\nhi\n"
    )
    assert [t.strip() for t in temporal_plain.units(note, "turn")] == ["hello", "hi"]
    (whole,) = temporal_plain.units(note, "session")
    assert "hello" in whole and "hi" in whole and "date:" not in whole


def test_plain_bm25_scores_both_grains_and_masks_newer_sessions_as_of(tmp_path: Path) -> None:
    report = temporal_plain.run(_dataset(tmp_path))
    assert report["questions"] == 2  # the abstention is not scored
    for grain in temporal_plain.GRAINS:
        ku = report[grain]["knowledge-update"]
        # as of September only the August session can answer, and nothing from November is shown
        assert ku["asof_hit@1"] == 1.0 and ku["leak@10"] == 0.0 and ku["hit@10"] == 1.0
    # by session the evidence holds both words twice and comes first; by turn the one turn holding both
    # (March 5th) beats each of the evidence's turns, which hold one word each, and the evidence is second
    assert report["session"]["temporal-reasoning"]["hit@1"] == 1.0
    assert report["turn"]["temporal-reasoning"]["hit@1"] == 0.0
    assert report["turn"]["temporal-reasoning"]["hit@5"] == 1.0
    table = temporal_plain.render(report)
    assert "| by session |" in table and "| by turn |" in table


def test_a_folder_without_questions_is_refused(tmp_path: Path) -> None:
    assert temporal_plain.main([str(tmp_path)]) == 2
