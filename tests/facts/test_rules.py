"""The resolution rules, case by case (issue 24 item 3): each row names the rule it must hit, so a rule
that stops firing, or fires for the wrong pair, fails here."""

from __future__ import annotations

import pytest

from hippo_core.facts.dates import order, parse_date
from hippo_core.facts.model import FactObject, clock_key
from hippo_core.facts.resolve import RULES, after_llm, outcome, resolve
from tests.facts.conftest import fact

OLD = fact("Seoul", "2020-05-01", "notes/old.md#Home")
OLD_UNKNOWN = fact("Seoul", "2020-05-01", "notes/old.md#Home", predicate="home_base", cardinality="unknown")

# (case, new fact, expected verdict, expected rule)
CASES = [
    ("identical value", fact("seoul", "2023-01-01", "notes/new.md#Home"), "MERGE", "identical"),
    ("other edition", fact("Busan", "2023-01-01", "n.md#x", edition="2010"), "COEXIST", "other_edition"),
    ("other lineage", fact("Busan", "2023-01-01", "n.md#x", lineage="chunha"), "COEXIST", "other_lineage"),
    ("other project", fact("Busan", "2023-01-01", "n.md#x", project="p2"), "COEXIST", "other_project"),
    ("newer value", fact("Busan", "2023-01-01", "n.md#x"), "SUPERSEDE", "newer_value"),
    ("older arrives late", fact("Incheon", "2019-01-01", "n.md#x"), "HISTORY", "older_arrives_late"),
    ("same month, no day", fact("Busan", "2020-05", "n.md#x"), "SUPERSEDE", "undated_value"),
    ("no date", fact("Busan", None, "n.md#x"), "SUPERSEDE", "undated_value"),
    (
        "maybe paraphrase (shared word)",
        fact("Seoul, Mapo", "2023-01-01", "n.md#x"),
        "ASK",
        "maybe_paraphrase",
    ),
    ("maybe translation (other script)", fact("서울", "2023-01-01", "n.md#x"), "ASK", "maybe_paraphrase"),
    (
        "unknown cardinality",
        fact("Busan", "2023-01-01", "n.md#x", predicate="home_base", cardinality="unknown"),
        "ASK",
        "unknown_cardinality",
    ),
    (
        "same object, two known predicates",
        fact("Seoul", "2023-01-01", "n.md#x", predicate="works_at"),
        "COEXIST",
        "distinct_predicates",
    ),
    (
        "same object, unknown predicate",
        fact("Seoul", "2023-01-01", "n.md#x", predicate="born_in", cardinality="unknown"),
        "ASK",
        "unknown_predicate_pair",
    ),
]


@pytest.mark.parametrize(("case", "new", "verdict", "rule"), CASES, ids=[c[0] for c in CASES])
def test_rules_table(case: str, new, verdict: str, rule: str) -> None:
    got = resolve(new, [OLD, OLD_UNKNOWN] if rule == "unknown_cardinality" else [OLD])
    assert [(r.verdict, r.rule) for r in got] == [(verdict, rule)], case
    assert RULES[rule] == verdict


def test_every_rule_has_a_case() -> None:
    covered = {c[3] for c in CASES} | {"no_candidate", "multi_valued"}
    assert covered == set(RULES)


def test_no_candidate_and_other_subject() -> None:
    assert [r.rule for r in resolve(OLD, [])] == ["no_candidate"]
    stranger = fact("Busan", "2023-01-01", subject="my sister")
    assert [r.rule for r in resolve(stranger, [OLD])] == ["no_candidate"]
    other_predicate = fact("Busan", "2023-01-01", predicate="works_at")
    assert [r.rule for r in resolve(other_predicate, [OLD])] == ["no_candidate"]


def test_multi_valued_values_add() -> None:
    tea = fact("green tea", "2020-01-01", predicate="likes", cardinality="multi")
    coffee = fact("coffee", "2024-01-01", "n.md#y", predicate="likes", cardinality="multi")
    assert [(r.verdict, r.rule) for r in resolve(coffee, [tea])] == [("COEXIST", "multi_valued")]


def test_superseded_and_merged_facts_are_no_candidates() -> None:
    gone = OLD.model_copy(update={"status": "superseded"})
    assert [r.rule for r in resolve(fact("Busan", "2023-01-01"), [gone])] == ["no_candidate"]


def test_direction_comes_from_the_dates_not_the_llm() -> None:
    later = fact("Seoul, Mapo", "2023-01-01", "n.md#x")
    r = after_llm(later, OLD, "update", "claude-test")
    assert (r.verdict, r.older, r.newer, r.decided_by) == (
        "SUPERSEDE",
        OLD.fact_id,
        later.fact_id,
        "llm:claude-test",
    )
    earlier = fact("Seoul, Mapo", "2019-01-01", "n.md#x")
    r = after_llm(earlier, OLD, "update", "claude-test")
    assert (r.verdict, r.older, r.newer) == ("HISTORY", earlier.fact_id, OLD.fact_id)
    assert after_llm(later, OLD, "same", "m").verdict == "MERGE"
    assert after_llm(later, OLD, "different", "m").verdict == "COEXIST"


def test_outcome_merge_wins_and_supersede_stays_a_proposal() -> None:
    new = fact("Busan", "2023-01-01", "n.md#x")
    rs = resolve(new, [OLD])
    out = outcome(rs, {OLD.fact_id: OLD.valid_at.value})
    assert out.status == "active" and [p.older for p in out.proposals] == [OLD.fact_id]
    late = fact("Incheon", "2019-01-01", "n.md#x")
    out = outcome(resolve(late, [OLD]), {OLD.fact_id: OLD.valid_at.value})
    assert (out.status, out.superseded_by, out.proposals) == ("superseded", OLD.fact_id, [])


@pytest.mark.parametrize(
    ("raw", "value", "precision"),
    [
        ("2024-03-10", "2024-03-10", "day"),
        ("2024-03-10T08:00:00+09:00", "2024-03-10", "day"),
        ("2024-03", "2024-03-01", "month"),
        ("2024", "2024-01-01", "year"),
        ("2024/3/9", "2024-03-09", "day"),
        ("2024. 3. 9.", None, "unknown"),
        ("2024년 3월", "2024-03-01", "month"),
        ("2024년 3월 9일", "2024-03-09", "day"),
        ("March 2024", "2024-03-01", "month"),
        ("10 March 2024", "2024-03-10", "day"),
        ("March 10, 2024", "2024-03-10", "day"),
        ("2024-02-30", None, "unknown"),
        ("last spring", None, "unknown"),
        ("9" * 5000, None, "unknown"),
    ],
)
def test_dates_with_precision(raw: str, value: str | None, precision: str) -> None:
    got = parse_date(raw)
    assert (got.value, got.precision) == (value, precision)
    assert (got.reason is not None) == (value is None)


def test_date_order_respects_precision() -> None:
    assert order(parse_date("2024-03-10"), parse_date("2024-03")) == "overlap"
    assert order(parse_date("2024-04-01"), parse_date("2024-03")) == "after"
    assert order(parse_date("2023"), parse_date("2024-01-01")) == "before"
    assert order(parse_date("x"), parse_date("2024")) == "unknown"


def test_object_keys() -> None:
    assert clock_key("3 pm") == clock_key("15:00") == clock_key("오후 3시") == "15:00"
    six_h = FactObject(kind="number", text="6 hours", number=6, unit="hours")
    mins = FactObject(kind="number", text="360 min", number=360, unit="min")
    assert six_h.key() == mins.key()
    assert FactObject(text="15:00").key() == FactObject(text="3pm").key()
