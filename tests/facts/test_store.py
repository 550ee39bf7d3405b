"""The fact store on SQLite and PostgreSQL: rules applied, supersessions pending until decided, the
timeline now / as of / with history, the anchors search needs, and nothing ever deleted."""

from __future__ import annotations

import pytest

from hippo_resources.fact_store import FactStore
from hippo_resources.sql_access import StoreError
from tests.facts.conftest import fact


def _values(facts) -> list[tuple[str, str]]:
    return [(f.object.text, f.status) for f in facts]


def test_supersession_waits_for_a_person(fact_store: FactStore) -> None:
    six = fact("6 hours before bed", "2025-01-01", "health/caffeine.md#Rule", predicate="caffeine_cutoff")
    three = fact("15:00", "2026-03-10", "health/caffeine-2026.md#Rule", predicate="caffeine_cutoff")
    same = fact("3 pm", "2026-03-12", "daily/2026-03-12.md#Notes", predicate="caffeine_cutoff")
    noon = fact("noon", "2024-01-01", "daily/2024-01-01.md#Notes", predicate="caffeine_cutoff")
    assert fact_store.add(six).status == "active"
    opened = fact_store.add(three)
    assert opened.status == "active" and len(opened.proposals) == 1
    assert fact_store.add(same).status == "merged"
    assert fact_store.add(noon).status == "superseded"  # older, arrived late: history at once
    # nothing current retired yet: both values hold until a person ticks
    assert _values(fact_store.timeline("me")) == [
        ("6 hours before bed", "pending_supersede"),
        ("15:00", "active"),
    ]
    assert fact_store.superseded_anchors() == {"daily/2024-01-01.md#Notes": ["health/caffeine.md#Rule"]}

    (proposal,) = fact_store.proposals()
    assert (proposal.older.fact_id, proposal.newer.fact_id) == (six.fact_id, three.fact_id)
    assert fact_store.decide(proposal.proposal_id, "supersede").applied
    assert not fact_store.decide(proposal.proposal_id, "reject").applied  # decided once
    old = fact_store.get(six.fact_id)
    assert old is not None and (old.status, old.invalid_at.value, old.superseded_by) == (
        "superseded",
        "2026-03-10",
        three.fact_id,
    )
    assert _values(fact_store.timeline("me")) == [("15:00", "active")]
    assert _values(fact_store.timeline("me", as_of="2025-06-01")) == [("6 hours before bed", "superseded")]
    assert _values(fact_store.timeline("me", as_of="2024-06-01")) == [("noon", "superseded")]
    history = fact_store.timeline("me", include_history=True)
    assert {f.fact_id for f in history} == {six.fact_id, three.fact_id, same.fact_id, noon.fact_id}
    assert [f.valid_at.value for f in history] == sorted(f.valid_at.value or "" for f in history)
    stale = fact_store.superseded_anchors()
    assert stale["health/caffeine.md#Rule"] == ["daily/2026-03-12.md#Notes", "health/caffeine-2026.md#Rule"]
    # the merged statement's anchor is provenance of the fact that holds
    current = fact_store.active_facts_for(["daily/2026-03-12.md#Notes", "health/caffeine.md#Rule"])
    assert [f.object.text for f in current["daily/2026-03-12.md#Notes"]] == ["15:00"]
    assert current["health/caffeine.md#Rule"] == []
    past = fact_store.active_facts_for(["health/caffeine.md#Rule"], as_of="2025-02-01")
    assert [f.object.text for f in past["health/caffeine.md#Rule"]] == ["6 hours before bed"]

    verdicts = [(r["verdict"], r["decided_by"]) for r in fact_store.ledger()]
    assert verdicts == [
        ("ADD", "rule:no_candidate"),
        ("SUPERSEDE_PENDING", "rule:newer_value"),
        ("MERGE", "rule:identical"),
        ("HISTORY", "rule:older_arrives_late"),
        ("HISTORY", "rule:older_arrives_late"),
        ("SUPERSEDE", "human"),
    ]


@pytest.mark.parametrize(
    ("choice", "older_status", "newer_status"),
    [
        ("keep_both", "active", "active"),
        ("same", "active", "merged"),
        ("reject", "active", "rejected"),
    ],
)
def test_other_answers(fact_store: FactStore, choice: str, older_status: str, newer_status: str) -> None:
    old, new = fact("Seoul", "2020-01-01"), fact("Busan", "2023-01-01", "notes/b.md#B")
    fact_store.add(old)
    fact_store.add(new)
    (p,) = fact_store.proposals()
    assert fact_store.decide(p.proposal_id, choice).outcome != "applied"
    assert (fact_store.get(old.fact_id).status, fact_store.get(new.fact_id).status) == (
        older_status,
        newer_status,
    )
    assert fact_store.proposals() == []
    assert fact_store.timeline("me", include_history=True)  # nothing lost


def test_editions_coexist_and_rerun_changes_nothing(fact_store: FactStore) -> None:
    e2004 = fact(
        "95",
        "2004-01-01",
        "lectures/2004.md#About",
        predicate="lecture_count",
        subject="춘하추동",
        edition="2004",
    )
    e2010 = fact(
        "120",
        "2010-01-01",
        "lectures/2010.md#About",
        predicate="lecture_count",
        subject="춘하추동",
        edition="2010",
    )
    fact_store.add(e2004)
    assert [r.rule for r in fact_store.add(e2010).resolutions] == ["other_edition"]
    again = fact_store.add(e2010)
    assert again.known and fact_store.proposals() == []
    assert len(fact_store.ledger()) == 2
    assert {f.object.text for f in fact_store.timeline("춘하추동")} == {"95", "120"}


def test_nothing_is_deleted_and_the_ledger_is_append_only(fact_store: FactStore) -> None:
    fact_store.add(fact("Seoul"))
    for sql in ("DELETE FROM facts", "DELETE FROM resolutions", "UPDATE resolutions SET verdict = 'x'"):
        with (
            pytest.raises(Exception, match="never deleted|append-only"),  # noqa: PT011 - driver-specific
            fact_store.tx(write=True) as tx,
        ):
            tx.run(sql)
    assert len(fact_store.facts()) == 1 and len(fact_store.ledger()) == 1


def test_a_fact_without_provenance_is_refused(fact_store: FactStore) -> None:
    with pytest.raises(ValueError, match="provenance"):
        fact_store.add(fact("Seoul").model_copy(update={"provenance": [], "fact_id": ""}))


def test_unreachable_postgres_is_a_store_error() -> None:
    store = FactStore(pg_dsn="postgresql://nobody@127.0.0.1:1/none", pg_schema="hippo_facts")
    with pytest.raises(StoreError):
        store.facts()
