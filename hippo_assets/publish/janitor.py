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

from hippo_assets.compile import vault_io as io
from hippo_assets.ingest.assets import known_sources
from hippo_assets.publish import GROUP
from hippo_core import approvals, frontmatter
from hippo_core.cards import parse_card
from hippo_core.frontmatter import FrontmatterError
from hippo_core.sources import body_hash, make_source_copy
from hippo_core.text_input import BadTextError
from hippo_core.vault_layout import APPROVALS, INBOX_PROCESSED, INBOX_SUFFIXES, REVIEWS, SOURCES, STAGING
from hippo_resources import Vault

ARCHIVE = f"{REVIEWS}/archive"


class JanitorConfig(Config):
    max_age_days: int = Field(
        default=14, ge=1, description="Archive staging cards unapproved for this many days."
    )
    today: str | None = Field(default=None, description="ISO date to judge age against (default: today).")


def _ticked_cards(vault) -> set[str]:
    out = set()
    for rel in vault.markdown_files():
        if rel.startswith(APPROVALS + "/"):
            out |= {ln.card for ln in approvals.parse(rel, io.read_text(vault, rel)) if ln.pending}
    return out


def _offered_cards(vault) -> set[str]:
    out = set()
    for rel in vault.markdown_files():
        if rel.startswith(APPROVALS + "/"):
            out |= {ln.card for ln in approvals.parse(rel, io.read_text(vault, rel))}
    return out


def _archive(vault, rel: str, text: str) -> str:
    raw, body = frontmatter.split(text)
    fields = {**frontmatter.parse_mapping(raw), "status": "archived"}
    dest = vault.move(rel, f"{ARCHIVE}/{PurePosixPath(rel).name}")
    vault.write_text(dest, frontmatter.render(fields, body.lstrip("\n")))
    return dest


@asset(
    group_name=GROUP,
    kinds={"markdown", "git"},
    description="Archives (never deletes) staging cards unapproved after N days and duplicates of an existing "
    "card or canonical page, and moves inbox files whose content already has a source copy (left behind when "
    "a run stopped between copy and move, so the inbox sensor will not retry them) to .processed/. Ledger: "
    "90-system/janitor/<date>.jsonl.",
)
def janitor(context: AssetExecutionContext, config: JanitorConfig, vault: Vault) -> MaterializeResult:
    today = dt.date.fromisoformat(config.today) if config.today else dt.date.today()
    cutoff = today - dt.timedelta(days=config.max_age_days)
    ticked = _ticked_cards(vault)
    canonical_titles = {
        (fm.title or "").strip().lower() for _, fm, _ in io.canonical_pages(vault) if fm.status == "canonical"
    }
    actions, touched = [], []
    seen_bodies: dict[str, str] = {}
    offered = _offered_cards(vault)
    staged = [r for r in vault.markdown_files() if r.startswith(STAGING + "/") and r.count("/") == 2]
    for rel in sorted(staged, key=lambda r: (r not in offered, r)):  # of two duplicates, keep the one offered
        if rel in ticked:
            continue
        try:
            text = io.read_text(vault, rel)
            card = parse_card(rel, text)
        except (BadTextError, FrontmatterError):
            continue
        digest = body_hash(card.body)
        why = None
        if card.title.strip().lower() in canonical_titles and not card.proposal_for:
            why = "duplicate of a canonical page with the same title"
        elif digest in seen_bodies:
            why = f"duplicate of {seen_bodies[digest]}"
        elif card.created and card.created[:10] < cutoff.isoformat():
            why = f"unapproved since {card.created[:10]} (more than {config.max_age_days} days)"
        seen_bodies.setdefault(digest, rel)
        if why:
            dest = _archive(vault, rel, text)
            touched += [rel, dest]
            actions.append({"ts": io.now(), "action": "archive", "path": rel, "to": dest, "why": why})
    known = known_sources(vault)
    actual = {}  # body hash as it is on disk, for copies whose declared sha256 is stale or missing
    for src in vault.markdown_files():
        if src.startswith(SOURCES + "/"):
            try:
                actual.setdefault(body_hash(frontmatter.split(io.read_text(vault, src))[1]), src)
            except (BadTextError, FrontmatterError):
                continue
    for rel in vault.inbox_files():
        name = PurePosixPath(rel).name
        if not name.lower().endswith(INBOX_SUFFIXES):
            continue
        try:
            copy = make_source_copy(vault.read_bytes(rel), name, io.now())
        except (BadTextError, FrontmatterError):
            continue
        existing = known.get(copy.sha256) or actual.get(copy.sha256)
        if existing:
            dest = vault.move(rel, f"{INBOX_PROCESSED}/{name}")
            touched += [rel, dest]
            note = "" if copy.sha256 in known else " (its declared sha256 is stale)"
            actions.append(
                {
                    "ts": io.now(),
                    "action": "release-inbox",
                    "path": rel,
                    "to": dest,
                    "why": f"already ingested as {existing}{note}",
                }
            )
    ledger = f"{io.JANITOR_DIR}/{today.isoformat()}.jsonl"
    io.append_jsonl(vault, ledger, actions)
    commit = vault.commit(f"janitor: {len(actions)} action(s)", [*touched, ledger]) if actions else None
    return MaterializeResult(
        metadata={
            "archived": sum(a["action"] == "archive" for a in actions),
            "inbox_released": sum(a["action"] == "release-inbox" for a in actions),
            "actions": MetadataValue.json(actions),
            "git_commit": commit or "",
        }
    )
