"""Group `facts`: `facts` takes statements in (the deterministic reader, then the LLM when there is a key)
and resolves them into the fact store; `fact_reviews` applies ticked review lines and lists the new
proposals in 30-reviews/facts/ (issue 24 items 2 and 4).

Every reason a statement was kept with less than it said (an unreadable date) or not taken (a quote not
in the source) is in the run metadata; nothing here fails a run for bad input.
"""

# No `from __future__ import annotations` here: Dagster reads the resource annotations at definition time.

from typing import Any

from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetExecutionContext,
    AssetKey,
    Config,
    MaterializeResult,
    MetadataValue,
    asset,
    asset_check,
)
from pydantic import Field

from hippo_assets.clock import now, today
from hippo_assets.facts import GROUP
from hippo_core.facts.dates import DatePoint, parse_date
from hippo_core.facts.extract import (
    EXTRACT_SYSTEM,
    PAIR_PROMPT_VERSION,
    PAIR_SYSTEM,
    PROMPT_VERSION,
    Extraction,
    PairAnswer,
    extract_prompt,
    extracted_fact,
    extraction_gate,
    pair_gate,
    pair_prompt,
)
from hippo_core.facts.model import Fact, subject_key
from hippo_core.facts.reader import read_note
from hippo_core.facts.resolve import Resolution, after_llm
from hippo_core.facts.review import (
    FACT_REVIEWS,
    HISTORY_STAGING,
    REVIEW_INDEX,
    Proposal,
    add_proposals,
    history_inner,
    index_inner,
    open_fingerprints,
    review_file,
    ticks,
)
from hippo_core.facts.sources import SourceUnit, anchor_of, note_sections
from hippo_core.facts.subjects import SubjectIndex
from hippo_core.safety.scrub import scrub
from hippo_core.safety.text_input import BadTextError
from hippo_core.vault import frontmatter, vault_layout
from hippo_core.vault.documents import parse_document
from hippo_core.vault.fingerprints import sha256_text
from hippo_core.wiki import approvals, generated
from hippo_core.wiki.gates import protection
from hippo_resources import LLM, ChunkStore, FactStore, Vault, WorkStore
from hippo_resources.fact_store import proposal_fingerprint
from hippo_resources.llm import LLMError


class FactsConfig(Config):
    llm_max_sources: int = Field(
        default=40, ge=0, description="At most this many sources read by the LLM per run (new content only)."
    )
    llm_max_pairs: int = Field(
        default=40, ge=0, description="At most this many same/update/different questions."
    )


def _vault_notes(
    vault: Vault,
) -> tuple[list[tuple[str, str, dict[str, Any], str, str]], list[dict[str, str]]]:
    """(path, title, frontmatter fields, body, content hash) of every readable note and source copy."""
    out, unreadable = [], []
    for rel in vault.markdown_files():
        if not (vault_layout.is_indexed(rel) or vault_layout.is_source_copy(rel)):
            continue
        try:
            text = vault.read_text(rel)
        except BadTextError as exc:
            unreadable.append({"path": rel, "reason": str(exc)})
            continue
        doc = parse_document(rel, text.encode("utf-8"))
        try:
            raw, _ = frontmatter.split(text)
            fields = frontmatter.parse_mapping(raw)
        except frontmatter.FrontmatterError:
            fields = {}
        fields.setdefault("aliases", doc.aliases)
        out.append((rel, doc.title, fields, doc.body, sha256_text(text)))
    return out, unreadable


def _subjects(notes: list[tuple[str, str, dict[str, Any], str, str]]) -> SubjectIndex:
    pairs = []
    for _, title, fields, _, _ in notes:
        aliases = fields.get("aliases") or []
        pairs.append((title, [str(a) for a in aliases] if isinstance(aliases, list) else [str(aliases)]))
    return SubjectIndex(pairs)


def _conversation_units(chunk_store: ChunkStore) -> list[SourceUnit]:
    from hippo_core.index.segments import conversation_path
    from hippo_resources.chunk_store import MESSAGES

    try:
        msgs = chunk_store.read(MESSAGES)
    except Exception:  # noqa: BLE001 - no conversations loaded yet
        return []
    if not msgs.height or "conversation_id" not in msgs.columns:
        return []
    units = []
    for (cid,), frame in msgs.partition_by("conversation_id", as_dict=True).items():
        rows = [r for r in frame.sort("position").iter_rows(named=True) if not r.get("is_tool")]
        if not rows:
            continue
        path = conversation_path(str(cid))
        sections = [(f"{path}#m{r['position']}", str(r["text"])) for r in rows]
        text = "\n\n".join(f"[{r['role']}] {r['text']}" for r in rows)
        stamps = [str(r["timestamp"]) for r in rows if r.get("timestamp")]
        units.append(
            SourceUnit(
                source=path,
                kind="conversation",
                text=text,
                date=parse_date(stamps[0][:10]) if stamps else DatePoint(),
                content_hash=sha256_text(text),
                trust="agent",
                session_id=str(cid),
                sections=sections,
            )
        )
    return units


def _checkpoint_units(work_store: WorkStore) -> list[SourceUnit]:
    units = []
    for project in work_store.projects():
        for cp in work_store.after(project, 0, 500):
            anchor = f"work/{project}#{cp.seq}"
            units.append(
                SourceUnit(
                    source=anchor,
                    kind="checkpoint",
                    text=cp.summary,
                    date=parse_date(cp.ts[:10]),
                    content_hash=sha256_text(cp.summary),
                    trust="agent",
                    session_id=cp.session_id,
                    project=project,
                    sections=[(anchor, cp.summary)],
                )
            )
    return units


class _Asker:
    """The same/update/different question for pairs the rules cannot place, gated, within a budget."""

    def __init__(self, llm: LLM, budget: int) -> None:
        self.llm, self.budget = llm, budget
        self.asked = 0
        self.rejected: list[dict[str, str]] = []
        self.unasked = 0

    def __call__(self, new: Fact, old: Fact, r: Resolution) -> Resolution | None:
        if not self.llm.enabled:
            return None
        if self.asked >= self.budget:
            self.unasked += 1
            return None
        self.asked += 1
        try:
            answer, _ = self.llm.structured(PairAnswer, PAIR_SYSTEM, pair_prompt(old, new))
        except LLMError as exc:
            self.rejected.append({"pair": f"{old.fact_id}/{new.fact_id}", "reason": str(exc)[:300]})
            return None
        why = pair_gate(answer, old, new)
        if why:
            self.rejected.append({"pair": f"{old.fact_id}/{new.fact_id}", "reason": why})
            return None
        return after_llm(new, old, answer.answer, self.llm.model)


@asset(
    group_name=GROUP,
    kinds={"sqlite", "postgres"},
    deps=[AssetKey("sources"), AssetKey("conversation_chunks")],
    description="Facts from notes and source copies (frontmatter `facts:` and `predicate:: value` lines, no "
    "LLM), and with an API key from notes, documents, conversations and work-memory checkpoints through the "
    "LLM (every quote checked against its source), resolved into the fact store: MERGE and COEXIST at once, "
    "every SUPERSEDE a PENDING proposal. Dates that cannot be read and rejected extractions are in the metadata.",
)
def facts(
    context: AssetExecutionContext,
    config: FactsConfig,
    vault: Vault,
    fact_store: FactStore,
    llm: LLM,
    chunk_store: ChunkStore,
    work_store: WorkStore,
) -> MaterializeResult:
    notes, unreadable = _vault_notes(vault)
    subjects = _subjects(notes)
    fact_store.remember_names(subjects.pairs())
    asker = _Asker(llm, config.llm_max_pairs)
    taken: dict[str, int] = {}
    problems: list[dict[str, str]] = []
    opened = 0

    def take(fact: Fact) -> None:
        nonlocal opened
        result = fact_store.add(fact, asker)
        key = "known" if result.known else result.status
        taken[key] = taken.get(key, 0) + 1
        opened += len(result.proposals)

    for rel, title, fields, body, digest in notes:
        trust = str(fields.get("trust") or "human_edit")
        read = read_note(
            rel, title, fields, body, digest, subjects, trust if trust in _TRUSTS else "human_edit"
        )
        problems += [{"anchor": p.anchor, "reason": scrub(p.reason).text} for p in read.problems]
        for fact in read.facts:
            take(fact)

    llm_report: dict[str, Any]
    rejected: list[dict[str, str]] = []
    if not llm.enabled:
        llm_report = {"enabled": False, "reason": "no LLM API key: only the deterministic reader ran"}
    else:
        units = [
            SourceUnit(
                source=rel,
                kind="document" if vault_layout.is_source_copy(rel) else "note",
                text=body,
                date=parse_date(fields.get("date") or fields.get("created")),
                content_hash=digest,
                trust="llm_summary",
                sections=note_sections(rel, body),
            )
            for rel, _, fields, body, digest in notes
            if body.strip()
        ]
        units += _conversation_units(chunk_store) + _checkpoint_units(work_store)
        extractor = f"llm:{llm.model}"
        todo = [
            u for u in units if not fact_store.extracted(u.source, u.content_hash, extractor, PROMPT_VERSION)
        ]
        read_now, errors = 0, []
        for unit in todo[: config.llm_max_sources]:
            try:
                out, _ = llm.structured(
                    Extraction, EXTRACT_SYSTEM, extract_prompt(unit.source, unit.date, unit.text)
                )
            except LLMError as exc:
                errors.append({"source": unit.source, "reason": str(exc)[:300]})
                continue
            read_now += 1
            kept = 0
            for item in out.facts:
                why = extraction_gate(item, unit.text)
                if why:
                    rejected.append({"source": unit.source, "reason": scrub(why).text})
                    continue
                fact, problem = extracted_fact(
                    item,
                    anchor_of(unit, item.quote),
                    unit.content_hash,
                    unit.date,
                    subjects,
                    llm.model,
                    trust=unit.trust,
                    session_id=unit.session_id,
                    project=unit.project,
                )
                if problem:
                    problems.append({"anchor": fact.provenance[0].anchor, "reason": scrub(problem).text})
                take(fact)
                kept += 1
            fact_store.mark_extracted(unit.source, unit.content_hash, extractor, PROMPT_VERSION, kept)
        llm_report = {
            "enabled": True,
            "model": llm.model,
            "prompt_version": PROMPT_VERSION,
            "pair_prompt_version": PAIR_PROMPT_VERSION,
            "sources_read": read_now,
            "sources_waiting": max(0, len(todo) - config.llm_max_sources),
            "errors": errors,
            "pairs_asked": asker.asked,
            "pairs_left_to_a_person": asker.unasked,
        }
    return MaterializeResult(
        metadata={
            "taken": MetadataValue.json(taken),
            "proposals_opened": opened,
            "store": MetadataValue.json(fact_store.counts()),
            "date_problems": MetadataValue.json(problems[:200]),
            "date_problem_count": len(problems),
            "rejected_extractions": MetadataValue.json(rejected[:200]),
            "rejected_pair_answers": MetadataValue.json(asker.rejected[:200]),
            "unreadable": MetadataValue.json(unreadable[:50]),
            "llm": MetadataValue.json(llm_report),
        }
    )


_TRUSTS = ("source", "human_edit", "llm_summary", "llm_context", "web_staging", "agent")


@asset_check(
    asset=facts, blocking=True, description="Every fact has provenance (an anchor and a content hash)."
)
def facts_have_provenance(fact_store: FactStore) -> AssetCheckResult:
    bad = fact_store.without_provenance()
    return AssetCheckResult(
        passed=not bad, severity=AssetCheckSeverity.ERROR, metadata={"facts": MetadataValue.json(bad[:50])}
    )


@asset_check(asset=facts, blocking=True, description="Every fact's valid_at is on or before its invalid_at.")
def fact_intervals_are_ordered(fact_store: FactStore) -> AssetCheckResult:
    bad = fact_store.inverted_intervals()
    return AssetCheckResult(
        passed=not bad, severity=AssetCheckSeverity.ERROR, metadata={"facts": MetadataValue.json(bad[:50])}
    )


@asset_check(
    asset=facts,
    blocking=True,
    description="At most one current value per single-valued (subject, predicate, qualifiers), unless a "
    "supersession proposal between them is pending.",
)
def one_value_per_single_slot(fact_store: FactStore) -> AssetCheckResult:
    bad = fact_store.conflicting_values()
    return AssetCheckResult(
        passed=not bad, severity=AssetCheckSeverity.ERROR, metadata={"slots": MetadataValue.json(bad[:50])}
    )


def _source_hash(vault: Vault, anchor: str) -> str | None:
    """The current content hash of a vault source (None when the source is not a vault file)."""
    path = anchor.split("#", 1)[0]
    if not path.endswith((".md", ".markdown")):
        return None
    if not vault.exists(path):
        return "missing"
    try:
        return sha256_text(vault.read_text(path))
    except BadTextError:
        return "unreadable"


def _current_fingerprint(vault: Vault, p: Proposal) -> tuple[str, str | None]:
    """The fingerprint the proposal would get now, and which source changed (None when neither did)."""
    hashes, changed = [], None
    for f in (p.older, p.newer):
        src = f.provenance[0]
        now_hash = _source_hash(vault, src.anchor)
        if now_hash is not None and now_hash != src.content_hash:
            changed = changed or src.path
        hashes.append(now_hash if now_hash is not None else src.content_hash)
    return proposal_fingerprint(p.proposal_id, hashes[0], hashes[1]), changed


def _history(
    vault: Vault, fact_store: FactStore, fact: Fact, subjects_pages: dict[str, str]
) -> tuple[str | None, dict[str, str] | None]:
    """Write the History block of the subject's canonical page; a person's page gets a staging proposal.
    Returns (path written, report of what was done instead)."""
    page = subjects_pages.get(fact.subject)
    if page is None:
        return None, None
    chain = fact_store.timeline(fact.subject, include_history=True)
    inner = history_inner(
        fact.subject_label or fact.subject, [f for f in chain if f.predicate == fact.predicate]
    )
    existing = vault.read_text(page)
    fm, _ = frontmatter.parse(existing, page)
    person = protection(fm) or (not vault.is_committed(page) and "uncommitted changes")
    update = generated.update(existing, inner)
    if not person and update.outcome in ("written", "unchanged"):
        if update.outcome == "written" and update.text is not None:
            vault.write_text(page, update.text)
            return page, None
        return None, None
    if not person and update.outcome == "no_markers":
        vault.write_text(page, generated.append(existing, inner))
        return page, None
    reason = f"a person's page ({person})" if person else (update.reason or update.outcome)
    slug = page.rsplit("/", 1)[-1]
    staging = f"{HISTORY_STAGING}/{slug}"
    body = f"# History proposed for [[{page.removesuffix('.md')}]]\n\nNot written there: {reason}. Copy it by hand if it is right.\n\n{inner}\n"
    vault.write_text(
        staging,
        frontmatter.render(
            {"type": "map", "status": "needs-review", "trust": "llm_context", "proposal_for": page}, body
        ),
    )
    return staging, {"page": page, "staging": staging, "reason": reason}


class FactReviewConfig(Config):
    overdue_days: int = Field(
        default=14,
        ge=1,
        description="A proposal waiting this long is listed first (never applied by a timeout).",
    )


@asset(
    group_name=GROUP,
    kinds={"markdown", "git"},
    deps=[facts],
    description="Ticked lines in 30-reviews/facts/ applied (supersede: old.invalid_at = new.valid_at and a "
    "History block on the subject's canonical page, or a staging proposal for a person's page; keep both; "
    "same fact; reject). A tick after a source changed is refused with the reason on its line and the "
    "proposal listed again. New PENDING proposals listed in today's file; the index lists overdue ones "
    "first. Nothing is applied by a timeout. One git commit.",
)
def fact_reviews(
    context: AssetExecutionContext, config: FactReviewConfig, vault: Vault, fact_store: FactStore
) -> MaterializeResult:
    date = today()
    texts: dict[str, str] = {}
    for rel, text in vault.texts([FACT_REVIEWS]).items():
        if rel != REVIEW_INDEX and not rel.startswith(HISTORY_STAGING + "/"):
            texts[rel] = text
    original = dict(texts)
    applied, refused, staged = [], [], []
    written: set[str] = set()
    pages = {}
    for rel, fm, _ in vault.canonical_pages():
        for name in [fm.title or "", *fm.aliases]:
            if name:
                pages.setdefault(subject_key(name), rel)
    answered: set[tuple[str, int]] = set()
    for rel in sorted(texts):
        for tick in ticks(rel, texts[rel]):
            if (rel, tick.line_no) in answered:
                continue
            answered.add((rel, tick.line_no))
            p = fact_store.proposal_by_fingerprint(tick.fingerprint)
            if p is None or p.state != "pending":
                why = "no pending proposal has this fingerprint" if p is None else f"already {p.state}"
                texts[rel] = _answer(texts[rel], tick.line_no, f"✗ refused: {why}")
                refused.append({"file": rel, "reason": why})
                continue
            current, changed = _current_fingerprint(vault, p)
            if current != tick.fingerprint:
                why = f"{changed or 'a source'} changed since the proposal; it is listed again with the new text"
                texts[rel] = _answer(texts[rel], tick.line_no, f"✗ refused: {why}")
                refused.append({"file": rel, "proposal": p.proposal_id, "reason": why})
                fact_store.refresh_fingerprint(p.proposal_id, current)  # listed again below
                for other in _siblings(texts[rel], tick.fingerprint, tick.line_no):
                    texts[rel] = _answer(texts[rel], other, "refused with the line above")
                    answered.add((rel, other))
                continue
            result = fact_store.decide(p.proposal_id, tick.choice)
            texts[rel] = _answer(texts[rel], tick.line_no, f"✓ {tick.choice.replace('_', ' ')} ({date})")
            for other in _siblings(texts[rel], tick.fingerprint, tick.line_no):
                texts[rel] = _answer(texts[rel], other, "answered on another line")
                answered.add((rel, other))
            applied.append({"proposal": p.proposal_id, "choice": tick.choice, "outcome": result.outcome})
            if tick.choice == "supersede":
                path, instead = _history(vault, fact_store, p.newer, pages)
                if path:
                    written.add(path)
                if instead:
                    staged.append(instead)
    listed = set()
    for text in texts.values():
        listed |= open_fingerprints(text)
    pending = fact_store.proposals()
    new = [p for p in pending if p.fingerprint not in listed]
    today_file = review_file(date)
    if new:
        texts[today_file] = add_proposals(
            texts.get(today_file) or (vault.read_text(today_file) if vault.exists(today_file) else None),
            date,
            new,
        )
    for rel, text in texts.items():
        if original.get(rel) != text:
            vault.write_text(rel, text)
            written.add(rel)
    where = {}
    for rel, text in texts.items():
        for fp in open_fingerprints(text):
            where.setdefault(fp, rel)
    inner = index_inner(pending, where, date, config.overdue_days)
    if vault.exists(REVIEW_INDEX):
        update = generated.update(vault.read_text(REVIEW_INDEX), inner)
        if update.outcome == "written" and update.text is not None:
            vault.write_text(REVIEW_INDEX, update.text)
            written.add(REVIEW_INDEX)
    else:
        fields = {"type": "map", "status": "reference", "trust": "llm_context", "title": "Fact reviews"}
        vault.write_text(REVIEW_INDEX, generated.new_page(fields, "Fact reviews", inner))
        written.add(REVIEW_INDEX)
    if written:
        vault.commit_at_run_end(
            f"fact reviews: {len(applied)} applied, {len(refused)} refused, {len(new)} new", sorted(written)
        )
    context.log.info(f"fact reviews: {len(applied)} applied, {len(refused)} refused, {len(new)} listed")
    return MaterializeResult(
        metadata={
            "applied": MetadataValue.json(applied),
            "refused": MetadataValue.json(refused),
            "history_staged": MetadataValue.json(staged),
            "listed": len(new),
            "pending": len(pending),
            "written": MetadataValue.json(sorted(written)),
            "at": now(),
        }
    )


def _answer(text: str, line_no: int, outcome: str) -> str:
    return approvals.set_outcome(text, line_no, outcome)


def _siblings(text: str, fingerprint: str, line_no: int) -> list[int]:
    """The other unanswered answer lines of the same proposal."""
    return [
        ln.line_no
        for ln in approvals.parse("", text)
        if ln.fingerprint == fingerprint and ln.line_no != line_no and ln.state != "answered"
    ]
