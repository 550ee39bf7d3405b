"""The LoCoMo benchmark's code path on a tiny LoCoMo-format set (the real set is read from ../shared)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.bench_locomo import build, locomo_export, render, run
from hippo_core.ranking.ranking import Candidate, RankingParams
from hippo_search.pipeline import context_stage, open_engine

TURNS = {
    "conv-a": [
        (1, "1:56 pm on 8 May, 2023", "Ana", "I adopted a grey cat named Pixel from the shelter yesterday."),
        (1, "1:56 pm on 8 May, 2023", "Ben", "Congratulations! How is Pixel settling in?"),
        (1, "1:56 pm on 8 May, 2023", "Ana", "She hides under the sofa but eats well."),
        (2, "10:00 am on 20 May, 2023", "Ben", "I started training for the Seoul marathon in October."),
        (2, "10:00 am on 20 May, 2023", "Ana", "How many kilometres do you run each week?"),
        (2, "10:00 am on 20 May, 2023", "Ben", "About forty kilometres, with a long run on Sundays."),
    ],
    "conv-b": [
        (1, "9:15 am on 3 July, 2023", "Cho", "My pottery class moved to Thursday evenings."),
        (1, "9:15 am on 3 July, 2023", "Dan", "Did you finish the blue vase?"),
        (1, "9:15 am on 3 July, 2023", "Cho", "Yes, the glaze cracked a little in the kiln."),
    ],
}
QUERIES = [
    ("conv-a:q0", "conv-a", "What is the name of Ana's cat?", ["conv-a:D1:1"]),
    ("conv-a:q1", "conv-a", "Which marathon is Ben training for?", ["conv-a:D2:1"]),
    ("conv-b:q0", "conv-b", "What happened to the vase glaze in the kiln?", ["conv-b:D1:3"]),
]


def write_set(folder: Path) -> Path:
    folder.mkdir()
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as fh:
        for conv, turns in TURNS.items():
            counters: dict[int, int] = {}
            for session, date, speaker, text in turns:
                counters[session] = counters.get(session, 0) + 1
                dia = f"D{session}:{counters[session]}"
                row = {"_id": f"{conv}:{dia}", "title": "", "text": f"{speaker}: {text}", "conv": conv,
                       "session": session, "date": date, "speaker": speaker, "dia_id": dia}  # fmt: skip
                fh.write(json.dumps(row) + "\n")
    with open(folder / "queries.jsonl", "w", encoding="utf-8") as fh:
        for qid, conv, text, _ in QUERIES:
            fh.write(json.dumps({"_id": qid, "text": text, "conv": conv}) + "\n")
    lines = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{d}\t1" for q, _, _, docs in QUERIES for d in docs]
    (folder / "qrels.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def test_locomo_export_keeps_sessions_as_days(tmp_path: Path) -> None:
    export, queries, qrels = locomo_export(write_set(tmp_path / "set"))
    conv = export[0]
    assert conv["uuid"] == "conv-a" and [m["uuid"] for m in conv["chat_messages"]][:2] == [
        "conv-a:D1:1",
        "conv-a:D1:2",
    ]
    assert conv["chat_messages"][3]["created_at"].startswith("2023-05-20T10:01")
    assert {m["sender"] for m in conv["chat_messages"]} == {"human", "assistant"}
    assert qrels["conv-b:q0"] == {"conv-b:D1:3"} and len(queries) == 3


def test_benchmark_runs_through_the_export_path(tmp_path: Path, embed_cache: Path) -> None:
    report = run(write_set(tmp_path / "set"), cache=embed_cache, work=tmp_path / "work")
    assert (report["conversations"], report["messages"], report["queries"]) == (2, 9, 3)
    lexical = report["messages_only"]["lexical"]
    assert lexical["hit@10"] == 1.0 and lexical["mrr@10"] >= 2 / 3
    seg = report["with_segments"]
    assert seg["chunks"] > report["messages_only"]["chunks"]  # segment rows were indexed
    assert seg["mean_segment_messages"] == 3.0  # one segment per session (days apart)
    assert seg["fused"]["hit@10"] == 1.0
    assert "| messages + segments | fused |" in render(report)


def test_one_conversation_and_the_message_level_index_alone(tmp_path: Path) -> None:
    export, queries, _ = locomo_export(write_set(tmp_path / "set"), {"conv-b"})
    assert [c["uuid"] for c in export] == ["conv-b"] and list(queries) == ["conv-b:q0"]
    lane = {"hit@1": 1.0, "hit@10": 1.0, "mrr@10": 1.0, "p50_ms": 1.0, "p95_ms": 2.0}
    report = {
        "dataset": "set (conv-b)", "conversations": 1, "messages": 3, "queries": 1,
        "messages_only": {"lexical": lane, "semantic": lane, "fused (no context)": lane, "fused": lane,
                          "build_seconds": 1.5},
    }  # fmt: skip
    text = render(report)
    assert "| messages | fused | 1.000 |" in text and "segments |" not in text and "Build: 1.5 s" in text


def test_the_context_stage_reads_turns_and_speakers_from_the_index(tmp_path: Path, embed_cache: Path) -> None:
    """Stage 3b on a real index of the export: places and speakers come from the generation's rows."""
    export, _, _ = locomo_export(write_set(tmp_path / "set"))
    settings = build(export, tmp_path / "work", False, embed_cache)
    snap = open_engine(settings, log=False).snapshot()
    message = {
        snap.rows.value("anchor", i): cid
        for cid, i in snap.row_of.items()
        if snap.rows.value("granularity", i) == "message"
    }
    m0, m1, m4 = (message[f"conversations/conv-a#m{p}"] for p in (0, 1, 4))
    note = Candidate(chunk_id=m4, score=0.5)  # Ana, two turns away from m0 and m1
    cands = [Candidate(chunk_id=m0, score=1.0), note, Candidate(chunk_id=m1, score=0.45)]
    off = RankingParams(
        conversation_neighbour_weight=0, conversation_reply_weight=0, conversation_speaker_boost=0
    )
    assert [c.chunk_id for c in context_stage(snap, cands, off, "q")] == [m0, m4, m1]
    near = off.model_copy(update={"conversation_neighbour_weight": 0.5})
    lifted = context_stage(snap, cands, near, "q")
    assert [c.chunk_id for c in lifted] == [m0, m1, m4]  # m1 = 0.45 + 0.5 × 1.0 (its neighbour m0)
    assert lifted[1].score == pytest.approx(0.95) and lifted[0].score == pytest.approx(1.0 + 0.5 * 0.45)
    ana = off.model_copy(update={"conversation_speaker_boost": 0.2})
    by_ana = context_stage(snap, cands, ana, "What did Ana say about the marathon?")
    assert {c.chunk_id: c.score for c in by_ana} == pytest.approx({m0: 1.2, m4: 0.6, m1: 0.45})
