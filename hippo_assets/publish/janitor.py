"""Group `publish`: the janitor archives stale and duplicate staging cards and frees stuck inbox files.

Nothing is deleted: cards move to 30-reviews/archive/ with status archived; every action is a line in
90-system/janitor/<date>.jsonl.
"""

# No `from __future__ import annotations` here: Dagster reads the Config and resource
# annotations of asset functions at definition time and cannot resolve them from strings.

import datetime as dt
from pathlib import PurePosixPath

from dagster import AssetExecutionContext, Config, MaterializeResult, MetadataValue, asset
from pydantic import Field

from hippo_assets.clock import now
from hippo_assets.ingest.assets import known_sources
from hippo_assets.publish import GROUP
from hippo_core.extract import ExtractionError, format_for
from hippo_core.safety.text_input import BadTextError
from hippo_core.vault import frontmatter
from hippo_core.vault.fingerprints import sha256_bytes
from hippo_core.vault.frontmatter import FrontmatterError
from hippo_core.vault.governance import CANONICAL_STATUSES
from hippo_core.vault.sources import body_hash, make_source_copy
from hippo_core.vault.vault_layout import ARCHIVE, INBOX_PROCESSED, INBOX_SUFFIXES, JANITOR_DIR, ledger_file
from hippo_core.wiki.gates import page_lineage
from hippo_resources import Vault


class JanitorConfig(Config):
    max_age_days: int = Field(
        default=14, ge=1, description="Archive staging cards unapproved for this many days."
    )
    today: str | None = Field(default=None, description="ISO date to judge age against (default: today).")


def _archive(vault, rel: str, text: str) -> str:
    raw, body = frontmatter.split(text)
    fields = {**frontmatter.parse_mapping(raw), "status": "archived"}
    dest = vault.move(rel, f"{ARCHIVE}/{PurePosixPath(rel).name}")
    vault.write_text(dest, frontmatter.render(fields, body.lstrip("\n")))
    return dest


@asset(
    group_name=GROUP,
    kinds={"markdown", "git"},
    deps=["canonical_wiki"],  # duplicates are judged against the canonical pages as promoted
    description="Archives (never deletes) staging cards unapproved after N days and duplicates of an existing "
    "card or canonical page (after canonical_wiki), and moves inbox files whose content already has a source copy (left behind when "
    "a run stopped between copy and move, so the inbox sensor will not retry them) to .processed/. Ledger: "
    "90-system/janitor/<date>.jsonl.",
)
def janitor(context: AssetExecutionContext, config: JanitorConfig, vault: Vault) -> MaterializeResult:
    today = dt.date.fromisoformat(config.today) if config.today else dt.date.today()
    cutoff = today - dt.timedelta(days=config.max_age_days)
    ticked = {ln.card for ln in vault.approval_lines("ticked")}
    canonical_titles = {  # one term may have a page in each lineage
        ((fm.title or "").strip().lower(), page_lineage(fm))
        for _, fm, _ in vault.canonical_pages()
        if fm.status in CANONICAL_STATUSES
    }
    actions, touched = [], []
    seen_bodies: dict[str, str] = {}
    offered = {ln.card for ln in vault.approval_lines()}
    staged, _ = vault.staged_cards(status=None)  # every card in staging, proposals too; unreadable ones stay
    for card in sorted(
        staged, key=lambda c: (c.path not in offered, c.path)
    ):  # of two duplicates, keep the offered
        rel = card.path
        if rel in ticked:
            continue
        digest = body_hash(card.body)
        why = None
        if (card.title.strip().lower(), card.lineage) in canonical_titles and not card.proposal_for:
            why = "duplicate of a canonical page with the same title"
        elif digest in seen_bodies:
            why = f"duplicate of {seen_bodies[digest]}"
        elif card.created and card.created[:10] < cutoff.isoformat():
            why = f"unapproved since {card.created[:10]} (more than {config.max_age_days} days)"
        seen_bodies.setdefault(digest, rel)
        if why:
            dest = _archive(vault, rel, card.text)
            touched += [rel, dest]
            actions.append({"ts": now(), "action": "archive", "path": rel, "to": dest, "why": why})
    known = known_sources(vault)  # ingest's own answer to "already a source?", documents included
    copies, _ = vault.source_copies()
    actual: dict[str, str] = {}  # body hash on disk, for copies whose declared sha256 is stale or missing
    for c in copies:
        actual.setdefault(c.body_sha256, c.path)
    for rel in vault.inbox_files():
        name = PurePosixPath(rel).name
        if not name.lower().endswith(INBOX_SUFFIXES):
            continue
        try:
            data = vault.read_bytes(rel)
            if format_for(name) is not None:  # a document: its bytes are the copy's original (no extraction)
                digest = sha256_bytes(data)
            else:
                digest = make_source_copy(data, name, now(), vault.extract_limits()).sha256
        except (BadTextError, FrontmatterError, ExtractionError, OSError):
            continue
        existing = known.get(digest) or actual.get(digest)
        if existing:
            dest = vault.move(rel, f"{INBOX_PROCESSED}/{name}")
            touched += [rel, dest]
            note = "" if digest in known else " (its declared sha256 is stale)"
            actions.append(
                {
                    "ts": now(),
                    "action": "release-inbox",
                    "path": rel,
                    "to": dest,
                    "why": f"already ingested as {existing}{note}",
                }
            )
    ledger = ledger_file(JANITOR_DIR, today.isoformat())
    vault.append_ledger(ledger, actions)
    if actions:
        vault.commit_at_run_end(f"janitor: {len(actions)} action(s)", [*touched, ledger])
    return MaterializeResult(
        metadata={
            "archived": sum(a["action"] == "archive" for a in actions),
            "inbox_released": sum(a["action"] == "release-inbox" for a in actions),
            "actions": MetadataValue.json(actions),
        }
    )
