"""Resolution, deterministic first (issue 24 item 3; seed S4 §3.1): what a new statement means for the
facts already held about its subject.

Candidates are only the current facts with the same subject and the same predicate (or the same subject
and the same object), in the same project, lineage and edition: never "similar facts anywhere". Then,
in this order (`RULES` names each rule; the ledger records `rule:<name>`):

| rule                  | when                                                   | verdict    |
|-----------------------|--------------------------------------------------------|------------|
| no_candidate          | nothing current about this subject and predicate       | ADD        |
| identical             | same predicate, same object, same qualifiers          | MERGE      |
| other_edition         | same predicate and object kind, another edition        | COEXIST    |
| other_lineage         | same predicate, another lineage                        | COEXIST    |
| other_project         | same predicate, another project                        | COEXIST    |
| multi_valued          | predicate whose values add (likes, role)               | COEXIST    |
| distinct_predicates   | same object, two known predicates                      | COEXIST    |
| newer_value           | single-valued, other object, new one dated later       | SUPERSEDE  |
| older_arrives_late    | single-valued, other object, new one dated earlier     | HISTORY    |
| undated_value         | single-valued, other object, dates overlap or unknown  | SUPERSEDE  |
| unknown_cardinality   | predicate of unknown cardinality, other object         | ASK        |
| maybe_paraphrase      | single-valued, text objects that may say the same      | ASK        |
| unknown_predicate_pair| same object, a predicate not in the table              | ASK        |

The LLM is asked only for ASK pairs, and only "same, update or different"; `after_llm` turns its answer
into a verdict whose direction still comes from the dates. MERGE, COEXIST and HISTORY (an older
statement arriving late, which changes nothing current) apply at once; a SUPERSEDE is always a
proposal that waits, PENDING, for a person's tick.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel

from hippo_core.facts.dates import order
from hippo_core.facts.model import CURRENT, Fact
from hippo_core.facts.subjects import PREDICATES

Verdict = Literal["ADD", "MERGE", "COEXIST", "SUPERSEDE", "HISTORY", "ASK"]
LlmAnswer = Literal["same", "update", "different"]

RULES: dict[str, Verdict] = {
    "no_candidate": "ADD",
    "identical": "MERGE",
    "other_edition": "COEXIST",
    "other_lineage": "COEXIST",
    "other_project": "COEXIST",
    "multi_valued": "COEXIST",
    "distinct_predicates": "COEXIST",
    "newer_value": "SUPERSEDE",
    "older_arrives_late": "HISTORY",
    "undated_value": "SUPERSEDE",
    "unknown_cardinality": "ASK",
    "maybe_paraphrase": "ASK",
    "unknown_predicate_pair": "ASK",
}


class Resolution(BaseModel):
    """The verdict on the new fact against one existing fact (`other`), and the rule that gave it.
    For SUPERSEDE and HISTORY, `older` is the fact that would stop holding and `newer` the one that holds."""

    verdict: Verdict
    rule: str
    other: str | None = None
    older: str | None = None
    newer: str | None = None
    reason: str = ""

    @property
    def decided_by(self) -> str:
        return self.rule if ":" in self.rule else f"rule:{self.rule}"


def _scripts(text: str) -> set[str]:
    out = set()
    for ch in text:
        if "\uac00" <= ch <= "\ud7a3" or "\u1100" <= ch <= "\u11ff" or "\u3130" <= ch <= "\u318f":
            out.add("hangul")
        elif ch.isalpha():
            out.add("latin" if ch.isascii() else "other")
    return out


def maybe_same_value(a: Fact, b: Fact) -> bool:
    """Could two different-looking objects say one thing (a paraphrase, a translation)? Only text objects:
    one holds the other, they share a word, or they are written in different scripts."""
    if a.object.kind != "text" or b.object.kind != "text":
        return False
    ta, tb = a.object.tokens(), b.object.tokens()
    ka, kb = a.object.key()[2:], b.object.key()[2:]
    if ka and kb and (ka in kb or kb in ka):
        return True
    if ta & tb:
        return True
    sa, sb = _scripts(a.object.text), _scripts(b.object.text)
    return bool(sa and sb and not (sa & sb))


def _direction(new: Fact, old: Fact, rule_later: str, rule_earlier: str, rule_unknown: str) -> Resolution:
    when = order(new.valid_at, old.valid_at)
    if when == "after":
        return Resolution(
            verdict="SUPERSEDE",
            rule=rule_later,
            other=old.fact_id,
            older=old.fact_id,
            newer=new.fact_id,
            reason=f"new value since {new.valid_at.label()}, replacing the one since {old.valid_at.label()}",
        )
    if when == "before":
        return Resolution(
            verdict="HISTORY",
            rule=rule_earlier,
            other=old.fact_id,
            older=new.fact_id,
            newer=old.fact_id,
            reason=f"an older statement ({new.valid_at.label()}) arrived after the current one "
            f"({old.valid_at.label()}): kept as history, nothing current changes",
        )
    return Resolution(
        verdict="SUPERSEDE",
        rule=rule_unknown,
        other=old.fact_id,
        older=old.fact_id,
        newer=new.fact_id,
        reason=f"the dates cannot order the two values ({new.valid_at.label()} vs {old.valid_at.label()}); "
        "proposed in the order they arrived, a person decides",
    )


def _against(new: Fact, old: Fact) -> Resolution | None:
    """The rule for one pair, or None when `old` is no candidate for `new`."""
    if new.subject != old.subject:
        return None
    same_predicate = new.predicate == old.predicate
    same_object = new.object.key() == old.object.key()
    if not same_predicate and not same_object:
        return None
    qn, qo = new.qualifiers.key(), old.qualifiers.key()
    if qn != qo:
        if not same_predicate:
            return None  # another edition's other predicate: nothing to say
        rule = "other_edition" if qn[0] != qo[0] else ("other_lineage" if qn[1] != qo[1] else "other_project")
        return Resolution(
            verdict="COEXIST",
            rule=rule,
            other=old.fact_id,
            reason="different edition, lineage or project: both hold",
        )
    if not same_predicate:
        if new.predicate in PREDICATES and old.predicate in PREDICATES:
            return Resolution(
                verdict="COEXIST",
                rule="distinct_predicates",
                other=old.fact_id,
                reason="two known predicates with one value",
            )
        return Resolution(
            verdict="ASK",
            rule="unknown_predicate_pair",
            other=old.fact_id,
            reason="same value under two predicates, one of them unknown",
        )
    if same_object:
        return Resolution(
            verdict="MERGE", rule="identical", other=old.fact_id, reason="the same fact; provenance added"
        )
    cardinality = new.cardinality if new.cardinality != "unknown" else old.cardinality
    if cardinality == "multi":
        return Resolution(
            verdict="COEXIST", rule="multi_valued", other=old.fact_id, reason="values of this predicate add"
        )
    if cardinality == "unknown":
        return Resolution(
            verdict="ASK",
            rule="unknown_cardinality",
            other=old.fact_id,
            reason="the predicate's cardinality is unknown",
        )
    if maybe_same_value(new, old):
        return Resolution(
            verdict="ASK",
            rule="maybe_paraphrase",
            other=old.fact_id,
            reason="the two values may say the same thing in other words",
        )
    return _direction(new, old, "newer_value", "older_arrives_late", "undated_value")


def resolve(new: Fact, existing: Sequence[Fact]) -> list[Resolution]:
    """The verdicts on `new` against every candidate among `existing` (only current facts count); one
    ADD when there is none. Pure: the caller applies them (see `outcome`)."""
    out = []
    for old in existing:
        if old.status not in CURRENT or old.fact_id == new.fact_id:
            continue
        r = _against(new, old)
        if r is not None:
            out.append(r)
    return out or [Resolution(verdict="ADD", rule="no_candidate", reason="nothing current to compare with")]


def after_llm(new: Fact, old: Fact, answer: LlmAnswer, model: str) -> Resolution:
    """The verdict for a pair the rules could not place, once the LLM said "same", "update" or
    "different". The LLM never picks the direction: an update is ordered by the dates as always."""
    rule = f"llm:{model}"
    if answer == "same":
        return Resolution(verdict="MERGE", rule=rule, other=old.fact_id, reason="the LLM: the same fact")
    if answer == "different":
        return Resolution(verdict="COEXIST", rule=rule, other=old.fact_id, reason="the LLM: different facts")
    return _direction(new, old, rule, rule, rule)


class Outcome(BaseModel):
    """What the verdicts do to the new fact: its status, what it merged into or what holds after it, the
    proposals to open and the ASK pairs still to put to the LLM."""

    status: Literal["active", "merged", "superseded"]
    merged_into: str | None = None
    superseded_by: str | None = None
    proposals: list[Resolution] = []
    ask: list[Resolution] = []


def outcome(resolutions: Sequence[Resolution], newer_dates: dict[str, str | None]) -> Outcome:
    """Combine the verdicts: a MERGE wins (the statement is one already held); else a HISTORY makes the new
    statement history, invalid from the earliest later value (`newer_dates`: fact id -> its valid_at);
    else the new fact is active, with a PENDING proposal for each SUPERSEDE."""
    merges = [r for r in resolutions if r.verdict == "MERGE"]
    if merges:
        return Outcome(status="merged", merged_into=merges[0].other)
    asks = [r for r in resolutions if r.verdict == "ASK"]
    history = [r for r in resolutions if r.verdict == "HISTORY"]
    if history:
        first = min(history, key=lambda r: newer_dates.get(r.newer or "") or "9999")
        return Outcome(status="superseded", superseded_by=first.newer, ask=asks)
    return Outcome(status="active", proposals=[r for r in resolutions if r.verdict == "SUPERSEDE"], ask=asks)
