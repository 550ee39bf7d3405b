"""Each lint rule of layers 1 and 2 on a small set of notes that plants its defect, and on one that does
not (so every rule is shown both to fire and to stay quiet)."""

from __future__ import annotations

from datetime import date

from hippo_core.dream.lint import (
    FactView,
    PendingReview,
    lint_facts_structure,
    lint_grounding,
    lint_structure,
)
from hippo_core.dream.outline import outline

TODAY = date(2026, 12, 7)


CLEAN = {
    "HOME.md": "# Home\n\n[[20-wiki/health/sleep]] and [[coffee]]\n",
    "20-wiki/health/sleep.md": "---\ntitle: Sleep\ncreated: 2026-11-01\n---\n# Sleep\n\n## Temperature\n\n18 degrees. See [[coffee#Cutoff]].\n",
    "20-wiki/health/coffee.md": "# Coffee\n\n## Cutoff\n\nNo coffee after 15:00. Back to [[sleep|sleep notes]].\n",
    "notes/image-note.md": "See ![[diagram.png]] and [the sleep page](../20-wiki/health/sleep.md#Temperature). [[HOME]]\n",
}


def o(files: dict[str, str]) -> dict:
    return {p: outline(p, t) for p, t in files.items()}


def rules(findings) -> list[tuple[str, str]]:  # noqa: ANN001
    return sorted((f.rule, f.path) for f in findings)


def test_a_clean_vault_has_no_structure_findings() -> None:
    assert lint_structure(o(CLEAN), attachments=["assets/diagram.png"]) == []


def test_broken_link_and_broken_anchor_are_found_with_their_line() -> None:
    files = {
        **CLEAN,
        "20-wiki/health/coffee.md": "# Coffee\n\nSee [[nowhere]] and [[sleep#Humidity]].\n## Cutoff\n",
    }
    found = lint_structure(o(files), attachments=["assets/diagram.png"])
    assert rules(found) == [
        ("broken_anchor", "20-wiki/health/coffee.md"),
        ("broken_link", "20-wiki/health/coffee.md"),
    ]
    assert {f.line for f in found} == {3}
    anchor = next(f for f in found if f.rule == "broken_anchor")
    assert anchor.related == ["20-wiki/health/sleep.md"]


def test_links_inside_code_fences_and_block_refs_are_not_checked() -> None:
    files = {**CLEAN, "notes/code.md": "[[HOME]]\n```\n[[not-a-link]]\n```\n[[sleep#^block-id]]\n"}
    assert lint_structure(o(files), attachments=["assets/diagram.png"]) == []


def test_a_missing_attachment_is_a_broken_link_when_attachments_are_known() -> None:
    assert rules(lint_structure(o(CLEAN), attachments=[])) == [("broken_link", "notes/image-note.md")]
    assert lint_structure(o(CLEAN)) == []  # attachments not listed: links to them are not checked


def test_an_orphan_is_a_note_with_no_link_in_or_out() -> None:
    files = {**CLEAN, "20-wiki/misc/lonely.md": "# Lonely\n\nNobody links here and I link nowhere.\n"}
    assert rules(lint_structure(o(files), ["assets/diagram.png"])) == [("orphan", "20-wiki/misc/lonely.md")]
    # linked from the index page: not an orphan
    files["HOME.md"] += "[[lonely]]\n"
    assert lint_structure(o(files), ["assets/diagram.png"]) == []


def test_sources_inbox_and_conversations_are_never_orphans() -> None:
    files = {
        **CLEAN,
        "10-sources/2026-11-01-a.md": "# A source\n\ntext\n",
        "00-inbox/new.md": "# new\n",
        "chats/x.md": "---\ntype: conversation\n---\n## Turn 1 - user\n\nhi\n",
    }
    assert lint_structure(o(files), ["assets/diagram.png"]) == []


def test_malformed_frontmatter_is_reported() -> None:
    files = {
        **CLEAN,
        "20-wiki/health/sleep.md": "---\ntitle: [unclosed\n---\n# Sleep\n\n## Temperature\n\n[[coffee]]\n",
    }
    found = lint_structure(o(files), ["assets/diagram.png"])
    assert rules(found) == [("malformed_frontmatter", "20-wiki/health/sleep.md")]


def test_exact_duplicates_are_grouped_once() -> None:
    body = "# Same\n\nThe very same text, copied. [[HOME]]\n"
    files = {**CLEAN, "notes/a.md": body, "notes/b.md": "---\ntitle: B\n---\n" + body, "notes/c.md": body}
    found = [f for f in lint_structure(o(files), ["assets/diagram.png"]) if f.rule == "exact_duplicate"]
    assert len(found) == 1
    assert found[0].path == "notes/a.md" and found[0].related == ["notes/b.md", "notes/c.md"]


def fact(fid: str, obj: str, status: str = "active", **kw) -> FactView:  # noqa: ANN003
    base = {
        "fact_id": fid,
        "subject": "me",
        "predicate": "caffeine_cutoff",
        "single_valued": True,
        "object": obj,
        "status": status,
        "anchor": "20-wiki/health/coffee.md#Cutoff",
        "valid_at": "2026-10-01",
        "recorded_at": "2026-10-01",
    }
    return FactView(**{**base, **kw})


def test_facts_without_provenance() -> None:
    assert lint_facts_structure([fact("f1", "15:00")]) == []
    found = lint_facts_structure([fact("f1", "15:00", anchor="")])
    assert [f.rule for f in found] == ["fact_without_provenance"]


def test_clean_facts_have_no_grounding_findings() -> None:
    facts = [fact("f1", "6 hours", status="superseded"), fact("f2", "15:00")]
    assert lint_grounding(o(CLEAN), facts, [], TODAY) == []


def test_two_active_values_unless_a_proposal_is_pending() -> None:
    facts = [fact("f1", "6 hours"), fact("f2", "15:00")]
    assert [f.rule for f in lint_grounding(o(CLEAN), facts, [], TODAY)] == ["two_active_values"]
    facts = [fact("f1", "6 hours"), fact("f2", "15:00", status="pending_supersede")]
    assert lint_grounding(o(CLEAN), facts, [], TODAY) == []
    multi = [
        fact("f1", "tea", single_valued=False, predicate="likes"),
        fact("f2", "coffee", single_valued=False, predicate="likes"),
    ]
    assert lint_grounding(o(CLEAN), multi, [], TODAY) == []


def test_a_fact_whose_source_is_gone_or_archived() -> None:
    gone = [fact("f1", "15:00", anchor="20-wiki/health/deleted.md#Cutoff")]
    assert [f.rule for f in lint_grounding(o(CLEAN), gone, [], TODAY)] == ["source_gone"]
    archived = {
        **CLEAN,
        "20-wiki/health/coffee.md": "---\nstatus: archived\n---\n# Coffee\n\n## Cutoff\n\nx [[sleep]]\n",
    }
    assert [f.rule for f in lint_grounding(o(archived), [fact("f1", "15:00")], [], TODAY)] == [
        "source_archived"
    ]


def test_a_volatile_fact_not_reconfirmed() -> None:
    facts = [
        fact("f1", "5 hours", status="superseded"),
        fact("f2", "6 hours", status="superseded"),
        fact("f3", "15:00", recorded_at="2026-01-01", valid_at="2026-01-01"),
    ]
    assert [f.rule for f in lint_grounding(o(CLEAN), facts, [], TODAY)] == ["volatile_unconfirmed"]
    facts[2] = fact("f3", "15:00", recorded_at="2026-11-30", valid_at="2026-11-30")
    assert lint_grounding(o(CLEAN), facts, [], TODAY) == []


def test_a_review_pending_past_its_deadline() -> None:
    old = PendingReview(proposal_id="p1", created="2026-11-01", path="30-reviews/facts/2026-11-01.md")
    new = PendingReview(proposal_id="p2", created="2026-12-01", path="30-reviews/facts/2026-12-01.md")
    found = lint_grounding(o(CLEAN), [], [old, new], TODAY)
    assert [(f.rule, f.path) for f in found] == [("review_overdue", "30-reviews/facts/2026-11-01.md")]


def test_dates_in_the_future() -> None:
    files = {
        **CLEAN,
        "20-wiki/health/sleep.md": CLEAN["20-wiki/health/sleep.md"].replace("2026-11-01", "2027-03-01"),
    }
    found = lint_grounding(o(files), [fact("f1", "15:00", valid_at="2027-01-01")], [], TODAY)
    assert sorted(f.rule for f in found) == ["future_date", "future_date"]
    assert {f.path for f in found} == {"20-wiki/health/sleep.md", "20-wiki/health/coffee.md"}
