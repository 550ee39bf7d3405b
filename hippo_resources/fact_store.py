"""The fact store: temporal facts, their provenance, supersession proposals and the append-only resolution
ledger (issue 24 item 1). It cannot be rebuilt from the vault (a person's review decisions live here), so
it is one of the backed-up stores (`hippo_resources.stores`).

SQLite under HIPPO_HOME by default, PostgreSQL with HIPPO_PG_DSN (schema `hippo_facts`). Facts are
invalidated, never deleted: a trigger refuses DELETE on `facts`; the ledger and the provenance rows refuse
UPDATE and DELETE too. `add` runs the pure rules of `hippo_core.facts.resolve` against the subject's
current facts; MERGE, COEXIST and HISTORY apply at once, every SUPERSEDE opens a PENDING proposal that
only `decide` (a person's tick) applies.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

from pydantic import BaseModel

from hippo_core.facts.dates import DatePoint, order
from hippo_core.facts.model import CURRENT, Fact, FactObject, Provenance, Qualifiers, subject_key
from hippo_core.facts.resolve import Resolution, outcome, resolve
from hippo_core.facts.review import Proposal
from hippo_core.safety.scrub import scrub
from hippo_core.vault.fingerprints import sha256_text
from hippo_resources.sql_access import dialect_ddl
from hippo_resources.sql_store import SqlStore

_TABLES = """
CREATE TABLE IF NOT EXISTS {t}facts (
    fact_id TEXT PRIMARY KEY,
    subject TEXT NOT NULL,
    subject_label TEXT NOT NULL,
    predicate TEXT NOT NULL,
    cardinality TEXT NOT NULL,
    object_kind TEXT NOT NULL,
    object_text TEXT NOT NULL,
    object_number {real},
    object_unit TEXT,
    object_date TEXT,
    object_date_precision TEXT NOT NULL,
    object_key TEXT NOT NULL,
    edition TEXT,
    lineage TEXT,
    project TEXT,
    statement TEXT NOT NULL,
    valid_at TEXT,
    valid_precision TEXT NOT NULL,
    invalid_at TEXT,
    invalid_precision TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    expired_at TEXT,
    status TEXT NOT NULL,
    merged_into TEXT,
    superseded_by TEXT
);
CREATE INDEX IF NOT EXISTS facts_by_subject ON {t}facts (subject, predicate);
CREATE TABLE IF NOT EXISTS {t}fact_sources (
    id {id},
    fact_id TEXT NOT NULL,
    anchor TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    session_id TEXT,
    trust TEXT NOT NULL,
    extractor TEXT NOT NULL,
    prompt_version TEXT,
    confidence {real} NOT NULL,
    quote TEXT,
    recorded_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS fact_sources_by_fact ON {t}fact_sources (fact_id);
CREATE INDEX IF NOT EXISTS fact_sources_by_anchor ON {t}fact_sources (anchor);
CREATE TABLE IF NOT EXISTS {t}resolutions (
    id {id},
    ts TEXT NOT NULL,
    old_fact TEXT,
    new_fact TEXT NOT NULL,
    verdict TEXT NOT NULL,
    decided_by TEXT NOT NULL,
    reason TEXT
);
CREATE TABLE IF NOT EXISTS {t}proposals (
    proposal_id TEXT PRIMARY KEY,
    older_fact TEXT NOT NULL,
    newer_fact TEXT NOT NULL,
    rule TEXT NOT NULL,
    reason TEXT,
    fingerprint TEXT NOT NULL,
    created_at TEXT NOT NULL,
    state TEXT NOT NULL,
    decided_at TEXT,
    decided_by TEXT,
    note TEXT
);
CREATE TABLE IF NOT EXISTS {t}subject_names (
    name TEXT PRIMARY KEY,
    subject TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS {t}extractions (
    source TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    extractor TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    ts TEXT NOT NULL,
    facts INTEGER NOT NULL,
    note TEXT,
    PRIMARY KEY (source, content_hash, extractor, prompt_version)
);
"""

SQLITE_DDL, PG_DDL = dialect_ddl(_TABLES, append_only=("resolutions", "fact_sources"))
SQLITE_DDL += (
    "CREATE TRIGGER IF NOT EXISTS facts_no_delete BEFORE DELETE ON facts\n"
    "BEGIN SELECT RAISE(ABORT, 'facts are invalidated, never deleted'); END;\n"
)
PG_DDL += (
    "CREATE OR REPLACE TRIGGER facts_no_delete BEFORE DELETE ON {schema}.facts\n"
    "    FOR EACH ROW EXECUTE FUNCTION {schema}.refuse_change();\n"
)

_FACT_COLUMNS = (
    "fact_id, subject, subject_label, predicate, cardinality, object_kind, object_text, object_number,"
    " object_unit, object_date, object_date_precision, object_key, edition, lineage, project, statement,"
    " valid_at, valid_precision, invalid_at, invalid_precision, recorded_at, expired_at, status,"
    " merged_into, superseded_by"
)
_SOURCE_COLUMNS = (
    "fact_id, anchor, content_hash, session_id, trust, extractor, prompt_version, confidence, quote,"
    " recorded_at"
)

Choice = Literal["supersede", "keep_both", "same", "reject"]
CHOICES: tuple[Choice, ...] = ("supersede", "keep_both", "same", "reject")
# What "decided by" an LLM callback returns for a pair the rules could not place.
Asker = Callable[[Fact, Fact, Resolution], Resolution | None]


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def _clean(text: str | None, limit: int = 2000) -> str | None:
    return None if text is None else scrub(text).text[:limit]


def proposal_id(older: str, newer: str) -> str:
    return sha256_text(f"{older}\x1f{newer}")[:16]


def proposal_fingerprint(pid: str, older_hash: str, newer_hash: str) -> str:
    """12 hex digits tying a review line to the proposal and to both sources as they were."""
    return sha256_text(f"{pid}\x1f{older_hash}\x1f{newer_hash}")[:12]


class AddResult(BaseModel):
    fact_id: str
    status: str
    known: bool = False  # the store held this statement already (a re-run)
    resolutions: list[Resolution] = []
    proposals: list[str] = []  # proposal ids opened


class DecideResult(BaseModel):
    proposal_id: str
    applied: bool
    outcome: str  # what happened, for the review line


class FactStore(SqlStore):
    """Facts, provenance, proposals and the resolution ledger."""

    pg_schema: str = "hippo_facts"

    SQLITE_DDL = SQLITE_DDL
    PG_DDL = PG_DDL

    # --- writing --------------------------------------------------------------------------------
    def add(self, fact: Fact, ask: Asker | None = None) -> AddResult:
        """Take one statement in: resolve it against the subject's current facts and apply what the rules
        allow (MERGE, COEXIST, HISTORY); open a PENDING proposal for each SUPERSEDE. A pair the rules
        cannot place goes to `ask` (the LLM); without it, or when it has no answer, a person decides it
        as a proposal too. The same statement from the same anchor again changes nothing."""
        if not fact.provenance:
            raise ValueError("a fact needs provenance")
        fact = fact.with_id()
        stamp = _now()
        with self.tx(write=True) as tx:
            existing = tx.one("SELECT status FROM facts WHERE fact_id = ?", (fact.fact_id,))
            if existing is not None:
                self._add_sources(tx, fact.fact_id, fact.provenance, stamp, only_new=True)
                return AddResult(fact_id=fact.fact_id, status=str(existing["status"]), known=True)
            current = self._current(tx, fact.subject)
            by_id = {f.fact_id: f for f in current}
            resolutions = resolve(fact, current)
            placed: list[Resolution] = []
            for r in resolutions:
                if r.verdict == "ASK" and ask is not None and r.other in by_id:
                    answer = ask(fact, by_id[r.other], r)
                    placed.append(answer if answer is not None else r)
                else:
                    placed.append(r)
            dates = {f.fact_id: f.valid_at.value for f in current}
            result = outcome(placed, dates)
            row = fact.model_copy(
                update={
                    "recorded_at": fact.recorded_at or stamp,
                    "status": result.status,
                    "merged_into": result.merged_into,
                    "superseded_by": result.superseded_by,
                }
            )
            if result.status == "superseded" and result.superseded_by in by_id:
                later = by_id[result.superseded_by].valid_at
                row = row.model_copy(update={"invalid_at": later, "expired_at": stamp})
            self._insert(tx, row)
            self._name(tx, row.subject_label, row.subject)
            self._add_sources(tx, row.fact_id, row.provenance, stamp)
            if result.status == "merged" and result.merged_into:
                self._add_sources(tx, result.merged_into, row.provenance, stamp, only_new=True)
            opened: list[str] = []
            for r in _effective(placed, result.status):
                verdict = "SUPERSEDE_PENDING" if r.verdict in ("SUPERSEDE", "ASK") else r.verdict
                self._ledger(tx, stamp, r.other, row.fact_id, verdict, r.decided_by, r.reason)
            if result.status == "active":
                for r in result.proposals:
                    older = by_id.get(r.older or "")
                    if older is not None:
                        opened.append(self._open(tx, older, row, r, stamp))
                for r in result.ask:  # not placed (no model, or its answer failed the gate): a person decides
                    other = by_id.get(r.other or "")
                    if other is None:
                        continue
                    if order(row.valid_at, other.valid_at) == "before":  # the dates still give the direction
                        opened.append(self._open(tx, row, other, r, stamp))
                    else:
                        opened.append(self._open(tx, other, row, r, stamp))
            return AddResult(fact_id=row.fact_id, status=row.status, resolutions=placed, proposals=opened)

    @staticmethod
    def _name(tx: Any, name: str, subject: str) -> None:
        key = subject_key(name)
        if key and key != subject:
            tx.run(
                "INSERT INTO subject_names (name, subject) VALUES (?, ?)"
                " ON CONFLICT (name) DO UPDATE SET subject = excluded.subject",
                (key, subject),
            )

    def remember_names(self, names: Iterable[tuple[str, str]]) -> None:
        """(name, subject key) pairs from the vault's aliases, so a timeline asked by any name finds it."""
        with self.tx(write=True) as tx:
            for name, subject in names:
                self._name(tx, name, subject)

    def resolve_subject(self, name: str) -> str:
        """The subject key a name stands for (through the aliases the store has seen), else its own key."""
        key = subject_key(name)
        with self.tx() as tx:
            row = tx.one("SELECT subject FROM subject_names WHERE name = ?", (key,))
        return str(row["subject"]) if row else key

    def _open(self, tx: Any, older: Fact, newer: Fact, r: Resolution, stamp: str) -> str:
        pid = proposal_id(older.fact_id, newer.fact_id)
        fp = proposal_fingerprint(pid, older.provenance[0].content_hash, newer.provenance[0].content_hash)
        tx.run(
            "INSERT INTO proposals (proposal_id, older_fact, newer_fact, rule, reason, fingerprint,"
            " created_at, state) VALUES (?, ?, ?, ?, ?, ?, ?, 'pending') ON CONFLICT (proposal_id) DO NOTHING",
            (pid, older.fact_id, newer.fact_id, r.decided_by, _clean(r.reason, 500), fp, stamp),
        )
        tx.run(
            "UPDATE facts SET status = 'pending_supersede' WHERE fact_id = ? AND status = 'active'",
            (older.fact_id,),
        )
        return pid

    def _insert(self, tx: Any, f: Fact) -> None:
        tx.run(
            f"INSERT INTO facts ({_FACT_COLUMNS}) VALUES ({', '.join('?' * 25)})",
            (
                f.fact_id,
                f.subject,
                _clean(f.subject_label or f.subject, 300),
                f.predicate,
                f.cardinality,
                f.object.kind,
                _clean(f.object.text, 1000),
                f.object.number,
                f.object.unit,
                f.object.date,
                f.object.date_precision,
                f.object.key(),
                f.qualifiers.edition,
                f.qualifiers.lineage,
                f.qualifiers.project,
                _clean(f.statement),
                f.valid_at.value,
                f.valid_at.precision,
                f.invalid_at.value,
                f.invalid_at.precision,
                f.recorded_at,
                f.expired_at,
                f.status,
                f.merged_into,
                f.superseded_by,
            ),
        )

    def _add_sources(
        self, tx: Any, fact_id: str, sources: Sequence[Provenance], stamp: str, only_new: bool = False
    ) -> None:
        have = set()
        if only_new:
            have = {
                (r["anchor"], r["content_hash"])
                for r in tx.rows(
                    "SELECT anchor, content_hash FROM fact_sources WHERE fact_id = ?", (fact_id,)
                )
            }
        for p in sources:
            if (p.anchor, p.content_hash) in have:
                continue
            tx.run(
                f"INSERT INTO fact_sources ({_SOURCE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    fact_id,
                    p.anchor,
                    p.content_hash,
                    p.session_id,
                    p.trust,
                    p.extractor,
                    p.prompt_version,
                    p.confidence,
                    _clean(p.quote, 1000),
                    stamp,
                ),
            )

    @staticmethod
    def _ledger(
        tx: Any, stamp: str, old: str | None, new: str, verdict: str, decided_by: str, reason: str | None
    ) -> None:
        tx.run(
            "INSERT INTO resolutions (ts, old_fact, new_fact, verdict, decided_by, reason)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (stamp, old, new, verdict, decided_by, _clean(reason, 500)),
        )

    # --- a person's decision -----------------------------------------------------------------
    def decide(
        self, pid: str, choice: Choice, decided_by: str = "human", note: str | None = None
    ) -> DecideResult:
        """Apply a person's answer to a PENDING proposal: supersede (old.invalid_at = new.valid_at),
        keep both, same fact (the newer merges into the older) or reject (the newer statement is wrong)."""
        if choice not in CHOICES:
            raise ValueError(f"unknown choice {choice!r}; one of {', '.join(CHOICES)}")
        stamp = _now()
        with self.tx(write=True) as tx:
            row = tx.one("SELECT * FROM proposals WHERE proposal_id = ?", (pid,))
            if row is None:
                return DecideResult(proposal_id=pid, applied=False, outcome="no such proposal")
            if row["state"] != "pending":
                return DecideResult(proposal_id=pid, applied=False, outcome=f"already {row['state']}")
            older, newer = str(row["older_fact"]), str(row["newer_fact"])
            new = self._fact(tx, newer)
            if choice == "supersede":
                tx.run(
                    "UPDATE facts SET status = 'superseded', invalid_at = ?, invalid_precision = ?,"
                    " expired_at = ?, superseded_by = ? WHERE fact_id = ?",
                    (new.valid_at.value, new.valid_at.precision, stamp, newer, older),
                )
                verdict, state = "SUPERSEDE", "applied"
            elif choice == "keep_both":
                verdict, state = "COEXIST", "kept_both"
            elif choice == "same":
                tx.run(
                    "UPDATE facts SET status = 'merged', merged_into = ?, expired_at = ? WHERE fact_id = ?",
                    (older, stamp, newer),
                )
                self._add_sources(tx, older, new.provenance, stamp, only_new=True)
                verdict, state = "MERGE", "merged"
            else:
                tx.run(
                    "UPDATE facts SET status = 'rejected', expired_at = ? WHERE fact_id = ?", (stamp, newer)
                )
                verdict, state = "REJECT", "rejected"
            tx.run(
                "UPDATE proposals SET state = ?, decided_at = ?, decided_by = ?, note = ? WHERE proposal_id = ?",
                (state, stamp, decided_by, _clean(note, 500), pid),
            )
            self._ledger(tx, stamp, older, newer, verdict, decided_by, f"review: {choice}")
            self._settle(tx, [older, newer])
        return DecideResult(proposal_id=pid, applied=True, outcome=state)

    def _settle(self, tx: Any, ids: Iterable[str]) -> None:
        """A fact under no pending proposal any more is plainly active again."""
        for fid in ids:
            waiting = tx.one(
                "SELECT 1 AS x FROM proposals WHERE older_fact = ? AND state = 'pending'", (fid,)
            )
            if waiting is None:
                tx.run(
                    "UPDATE facts SET status = 'active' WHERE fact_id = ? AND status = 'pending_supersede'",
                    (fid,),
                )

    # --- reading ------------------------------------------------------------------------------
    def _sources(self, tx: Any, ids: Sequence[str]) -> dict[str, list[Provenance]]:
        out: dict[str, list[Provenance]] = {i: [] for i in ids}
        for chunk_start in range(0, len(ids), 500):
            part = ids[chunk_start : chunk_start + 500]
            if not part:
                continue
            marks = ", ".join("?" * len(part))
            for r in tx.rows(
                f"SELECT {_SOURCE_COLUMNS} FROM fact_sources WHERE fact_id IN ({marks}) ORDER BY id", part
            ):
                out[str(r["fact_id"])].append(
                    Provenance(
                        anchor=r["anchor"],
                        content_hash=r["content_hash"],
                        session_id=r["session_id"],
                        trust=r["trust"],
                        extractor=r["extractor"],
                        prompt_version=r["prompt_version"],
                        confidence=float(r["confidence"]),
                        quote=r["quote"],
                    )
                )
        return out

    def _facts(self, tx: Any, where: str, args: Sequence[Any]) -> list[Fact]:
        rows = tx.rows(f"SELECT {_FACT_COLUMNS} FROM facts WHERE {where}", args)
        sources = self._sources(tx, [str(r["fact_id"]) for r in rows])
        return [_fact_from_row(r, sources[str(r["fact_id"])]) for r in rows]

    def _fact(self, tx: Any, fact_id: str) -> Fact:
        found = self._facts(tx, "fact_id = ?", (fact_id,))
        if not found:
            raise KeyError(fact_id)
        return found[0]

    def _current(self, tx: Any, subject: str) -> list[Fact]:
        return self._facts(tx, "subject = ? AND status IN ('active', 'pending_supersede')", (subject,))

    def get(self, fact_id: str) -> Fact | None:
        with self.tx() as tx:
            found = self._facts(tx, "fact_id = ?", (fact_id,))
        return found[0] if found else None

    def facts(self, subject: str | None = None, statuses: Sequence[str] | None = None) -> list[Fact]:
        """Facts, optionally of one subject (a name or key) and of some statuses, oldest valid_at first."""
        where, args = "1 = 1", []
        if subject is not None:
            where += " AND subject = ?"
            args.append(self.resolve_subject(subject))
        if statuses:
            where += f" AND status IN ({', '.join('?' * len(statuses))})"
            args += list(statuses)
        with self.tx() as tx:
            found = self._facts(tx, where, args)
        return sorted(found, key=_chronological)

    def subjects(self) -> list[str]:
        with self.tx() as tx:
            return [str(r["subject"]) for r in tx.rows("SELECT DISTINCT subject FROM facts ORDER BY subject")]

    def timeline(self, subject: str, as_of: str | None = None, include_history: bool = False) -> list[Fact]:
        """A subject's facts, oldest first: what holds now (default), what held on `as_of` (YYYY-MM-DD, world
        time), or every statement ever taken in (`include_history`: superseded, merged and rejected too)."""
        every = self.facts(subject)
        if include_history:
            return every
        if as_of:
            day = as_of[:10]
            return [f for f in every if f.valid_on(day)]
        return [f for f in every if f.status in CURRENT]

    def proposals(self, state: str | None = "pending") -> list[Proposal]:
        """Proposals (PENDING by default), oldest first."""
        where, args = ("state = ?", [state]) if state else ("1 = 1", [])
        with self.tx() as tx:
            rows = tx.rows(f"SELECT * FROM proposals WHERE {where} ORDER BY created_at, proposal_id", args)
            ids = sorted({str(r["older_fact"]) for r in rows} | {str(r["newer_fact"]) for r in rows})
            facts = (
                {f.fact_id: f for f in self._facts(tx, f"fact_id IN ({', '.join('?' * len(ids))})", ids)}
                if ids
                else {}
            )
        return [
            Proposal(
                proposal_id=r["proposal_id"],
                older=facts[str(r["older_fact"])],
                newer=facts[str(r["newer_fact"])],
                rule=r["rule"],
                reason=r["reason"],
                fingerprint=r["fingerprint"],
                created_at=r["created_at"],
                state=r["state"],
                decided_at=r["decided_at"],
                decided_by=r["decided_by"],
                note=r["note"],
            )
            for r in rows
        ]

    def ledger(self, limit: int = 1000) -> list[dict[str, Any]]:
        """The resolution ledger, oldest first."""
        with self.tx() as tx:
            return tx.rows(
                "SELECT id, ts, old_fact, new_fact, verdict, decided_by, reason FROM resolutions ORDER BY id LIMIT ?",
                (limit,),
            )

    # --- for search (the time stages) --------------------------------------------------------------
    def anchor_facts(self, anchors: Iterable[str]) -> dict[str, list[Fact]]:
        """The facts each anchor (path#heading) states, every status; anchors with none are left out."""
        wanted = sorted(set(anchors))
        out: dict[str, list[Fact]] = {}
        with self.tx() as tx:
            for start in range(0, len(wanted), 500):
                part = wanted[start : start + 500]
                if not part:
                    continue
                marks = ", ".join("?" * len(part))
                pairs = tx.rows(
                    f"SELECT DISTINCT anchor, fact_id FROM fact_sources WHERE anchor IN ({marks})", part
                )
                ids = sorted({str(p["fact_id"]) for p in pairs})
                facts = {
                    f.fact_id: f
                    for f in (
                        self._facts(tx, f"fact_id IN ({', '.join('?' * len(ids))})", ids) if ids else []
                    )
                }
                for p in pairs:
                    f = facts.get(str(p["fact_id"]))
                    if f is not None:
                        out.setdefault(str(p["anchor"]), []).append(f)
        return out

    def active_facts_for(self, anchors: Iterable[str], as_of: str | None = None) -> dict[str, list[Fact]]:
        """Per anchor, the facts it states that hold now (current status) or on `as_of` (world time)."""
        out = {}
        for anchor, facts in self.anchor_facts(anchors).items():
            held = [f for f in facts if (f.valid_on(as_of[:10]) if as_of else f.status in CURRENT)]
            out[anchor] = held
        return out

    def superseded_anchors(self) -> dict[str, list[str]]:
        """Anchors every one of whose facts a person superseded (merged and rejected statements aside),
        each with the anchors of the facts that replaced them: a chunk there is stale, not wrong."""
        with self.tx() as tx:
            rows = tx.rows(
                "SELECT s.anchor AS anchor, f.fact_id AS fact_id, f.status AS status,"
                " f.superseded_by AS superseded_by FROM fact_sources s JOIN facts f ON f.fact_id = s.fact_id"
                " WHERE f.status NOT IN ('merged', 'rejected')"
            )
            by_anchor: dict[str, list[dict[str, Any]]] = {}
            for r in rows:
                by_anchor.setdefault(str(r["anchor"]), []).append(r)
            stale = {a: rs for a, rs in by_anchor.items() if all(r["status"] == "superseded" for r in rs)}
            later = sorted(
                {str(r["superseded_by"]) for rs in stale.values() for r in rs if r["superseded_by"]}
            )
            where: dict[str, list[str]] = {}
            if later:
                marks = ", ".join("?" * len(later))
                for r in tx.rows(
                    f"SELECT fact_id, anchor FROM fact_sources WHERE fact_id IN ({marks}) ORDER BY id", later
                ):
                    where.setdefault(str(r["fact_id"]), []).append(str(r["anchor"]))
        return {
            a: sorted({x for r in rs for x in where.get(str(r["superseded_by"]), [])})
            for a, rs in sorted(stale.items())
        }

    def proposal_by_fingerprint(self, fingerprint: str) -> Proposal | None:
        for p in self.proposals(state=None):
            if p.fingerprint == fingerprint:
                return p
        return None

    def refresh_fingerprint(self, pid: str, fingerprint: str) -> None:
        """A proposal whose source changed gets a new fingerprint (and a new review line)."""
        with self.tx(write=True) as tx:
            tx.run("UPDATE proposals SET fingerprint = ? WHERE proposal_id = ?", (fingerprint, pid))

    # --- what was extracted (so the LLM reads a source once per content and prompt) ---------------
    def extracted(self, source: str, content_hash: str, extractor: str, prompt_version: str) -> bool:
        with self.tx() as tx:
            return (
                tx.one(
                    "SELECT 1 AS x FROM extractions WHERE source = ? AND content_hash = ? AND extractor = ?"
                    " AND prompt_version = ?",
                    (source, content_hash, extractor, prompt_version),
                )
                is not None
            )

    def mark_extracted(
        self, source: str, content_hash: str, extractor: str, prompt_version: str, facts: int, note: str = ""
    ) -> None:
        with self.tx(write=True) as tx:
            tx.run(
                "INSERT INTO extractions (source, content_hash, extractor, prompt_version, ts, facts, note)"
                " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (source, content_hash, extractor, prompt_version, _now(), facts, _clean(note, 500)),
            )

    # --- the blocking checks ---------------------------------------------------------------------
    def without_provenance(self) -> list[str]:
        with self.tx() as tx:
            rows = tx.rows(
                "SELECT f.fact_id AS fact_id FROM facts f LEFT JOIN fact_sources s ON s.fact_id = f.fact_id"
                " WHERE s.fact_id IS NULL ORDER BY f.fact_id"
            )
        return [str(r["fact_id"]) for r in rows]

    def inverted_intervals(self) -> list[str]:
        """Facts whose valid_at is after their invalid_at."""
        with self.tx() as tx:
            rows = tx.rows(
                "SELECT fact_id FROM facts WHERE valid_at IS NOT NULL AND invalid_at IS NOT NULL"
                " AND valid_at > invalid_at ORDER BY fact_id"
            )
        return [str(r["fact_id"]) for r in rows]

    def conflicting_values(self) -> list[dict[str, Any]]:
        """Single-valued slots (subject, predicate, qualifiers) holding two current values with no pending
        proposal between any of them."""
        current = self.facts(statuses=CURRENT)
        with self.tx() as tx:
            pending = {
                (str(r["older_fact"]), str(r["newer_fact"]))
                for r in tx.rows("SELECT older_fact, newer_fact FROM proposals WHERE state = 'pending'")
            }
        slots: dict[tuple[str, ...], list[Fact]] = {}
        for f in current:
            if f.cardinality == "single":
                slots.setdefault((f.subject, f.predicate, *f.qualifiers.key()), []).append(f)
        out = []
        for slot, facts in slots.items():
            if len({f.object.key() for f in facts}) < 2:
                continue
            ids = {f.fact_id for f in facts}
            if any(a in ids and b in ids for a, b in pending):
                continue
            out.append({"slot": list(slot), "facts": sorted(ids)})
        return out

    def counts(self) -> dict[str, int]:
        with self.tx() as tx:
            rows = tx.rows("SELECT status, COUNT(*) AS n FROM facts GROUP BY status")
            pending = tx.one("SELECT COUNT(*) AS n FROM proposals WHERE state = 'pending'")
        out = {str(r["status"]): int(r["n"]) for r in rows}
        out["pending_proposals"] = int(pending["n"]) if pending else 0
        return out


def _effective(placed: Sequence[Resolution], status: str) -> list[Resolution]:
    """The verdicts that took effect, for the ledger: a merged statement only merged; a statement that
    became history proposes nothing."""
    if status == "merged":
        return [r for r in placed if r.verdict == "MERGE"][:1]
    if status == "superseded":
        return [r for r in placed if r.verdict not in ("SUPERSEDE", "ASK")]
    return list(placed)


def _chronological(f: Fact) -> tuple[str, str, str]:
    return (f.valid_at.value or "", f.recorded_at or "", f.fact_id)


def _fact_from_row(r: dict[str, Any], sources: list[Provenance]) -> Fact:
    return Fact(
        fact_id=r["fact_id"],
        subject=r["subject"],
        subject_label=r["subject_label"],
        predicate=r["predicate"],
        cardinality=r["cardinality"],
        object=FactObject(
            kind=r["object_kind"],
            text=r["object_text"],
            number=r["object_number"],
            unit=r["object_unit"],
            date=r["object_date"],
            date_precision=r["object_date_precision"],
        ),
        qualifiers=Qualifiers(edition=r["edition"], lineage=r["lineage"], project=r["project"]),
        statement=r["statement"],
        valid_at=DatePoint(value=r["valid_at"], precision=r["valid_precision"]),
        invalid_at=DatePoint(value=r["invalid_at"], precision=r["invalid_precision"]),
        recorded_at=r["recorded_at"],
        expired_at=r["expired_at"],
        status=r["status"],
        merged_into=r["merged_into"],
        superseded_by=r["superseded_by"],
        provenance=sources,
    )


def fact_json(f: Fact) -> dict[str, Any]:
    """A fact as REST and MCP return it (one shape for both)."""
    return json.loads(f.model_dump_json())
