"""A tiny LongMemEval-shaped set (the layout `eval.temporal` and `eval.temporal_plain` read): one knowledge-update
question and one temporal-reasoning question, each with its own folder of dated sessions."""

from __future__ import annotations

import json
from pathlib import Path


def write_session(folder: Path, date: str, sid: str, turns: list[tuple[str, str]]) -> None:
    body = "".join(f"## Turn {n:02d} - {role}\n\n{text}\n\n" for n, (role, text) in enumerate(turns, 1))
    note = f"---\ntype: conversation\ndate: {date}\nsession: {sid}\n---\n\n# Chat {date} ({sid})\n\n{body}"
    (folder / f"{date}-{sid}.md").write_text(note, encoding="utf-8")


def temporal_set(tmp_path: Path) -> Path:
    """One KU question (postcards: 17 in August, 25 in November) and one TR question whose two words are
    each twice in its evidence session, in two turns, and once each in one turn of another session."""
    ku, tr = tmp_path / "vault" / "ku1", tmp_path / "vault" / "tr1"
    ku.mkdir(parents=True)
    tr.mkdir(parents=True)
    write_session(
        ku,
        "2023-08-10",
        "s01",
        [("user", "I have added 17 postcards to my collection."), ("assistant", "Nice.")],
    )
    write_session(
        ku, "2023-09-01", "s02", [("user", "Tell me about sourdough bread."), ("assistant", "Flour, water.")]
    )
    write_session(
        ku, "2023-11-20", "s03", [("user", "Now I have added 25 postcards!"), ("assistant", "Great.")]
    )
    write_session(
        tr,
        "2023-03-01",
        "s01",
        [("user", "Tomatoes, tomatoes planted."), ("assistant", "A greenhouse, greenhouse.")],
    )
    write_session(
        tr, "2023-03-05", "s02", [("user", "Tomatoes in a greenhouse?"), ("assistant", "Water them daily.")]
    )
    for day, sid, words in (
        ("07", "s03", "bike chain"),
        ("09", "s04", "sourdough flour"),
        ("11", "s05", "jazz vinyl"),
    ):
        write_session(tr, f"2023-03-{day}", sid, [("user", f"My {words}."), ("assistant", "Noted.")])
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
