"""Group `publish`: approved cards become canonical pages after every gate passes again; index pages follow."""

# No `from __future__ import annotations` here: Dagster reads the Config and resource
# annotations of asset functions at definition time and cannot resolve them from strings.

from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetExecutionContext,
    Config,
    MaterializeResult,
    MetadataValue,
    asset,
    asset_check,
)
from pydantic import Field

from hippo_assets.clock import now, today
from hippo_assets.compile.assets import approval_requests
from hippo_assets.compile.related import tokenizer
from hippo_assets.publish import GROUP
from hippo_core.safety.text_input import BadTextError
from hippo_core.vault import frontmatter
from hippo_core.vault.governance import CANONICAL_STATUSES
from hippo_core.vault.vault_layout import GATES_DIR, LOG, PROMOTIONS_DIR, ledger_file, sector_for_path
from hippo_core.wiki import approvals, generated
from hippo_core.wiki.cards import fingerprint, parse_card, promoted_text
from hippo_core.wiki.gates import build_facts, check_card, latest_verdicts, promotion_target
from hippo_core.wiki.generated import new_page
from hippo_core.wiki.index_pages import (
    GENERATED_BY,
    PageInfo,
    Queues,
    ReviewItem,
    home_block,
    hub_block,
    hub_path,
    index_block,
    page_fields,
)
from hippo_resources import Vault


class PromoteConfig(Config):
    dry_run: bool = Field(
        default=False,
        description="Report what would happen and write nothing (HIPPO_DRY_RUN in promote_job).",
    )


@asset(
    group_name=GROUP,
    kinds={"markdown", "git"},
    deps=[approval_requests],
    description="Ticked approvals whose fingerprint still matches: the same check as at verdict time (the seven "
    "gates and citation verification) runs again, the card moves to 20-wiki/<sector>/<slug>.md with status "
    "canonical, the approval line links to the page, 90-system/promotions/<date>.jsonl and log.md get a line; "
    "the run makes one git commit. A human_edit or verified page is never overwritten (the card becomes a "
    "proposal). `dry_run` (HIPPO_DRY_RUN in promote_job) writes nothing and reports the plan.",
)
def canonical_wiki(context: AssetExecutionContext, config: PromoteConfig, vault: Vault) -> MaterializeResult:
    dry = config.dry_run
    facts = build_facts(vault.texts())
    pages = vault.canonical_pages()
    texts: dict[str, str] = {}  # approval files as they will be written
    touched: list[str] = []
    promoted, rejected, proposals = [], [], []
    left_alone: list[dict[str, str]] = []
    date = today()

    def outcome(line: approvals.ApprovalLine, text: str, link_to: str | None = None) -> None:
        current = texts.setdefault(line.file, vault.read_text(line.file))
        texts[line.file] = approvals.set_outcome(current, line.line_no, text, link_to)

    for line in vault.approval_lines("ticked"):
        if not vault.exists(line.card):
            rejected.append({"card": line.card, "why": "the card is no longer in staging"})
            outcome(line, "✗ rejected: the card is no longer in staging")
            continue
        card = parse_card(line.card, vault.read_text(line.card))
        fp = fingerprint(card.text)
        if fp != line.fingerprint:
            why = f"the card changed since it was proposed (fingerprint {line.fingerprint} → {fp}); review it again"
            rejected.append({"card": card.path, "why": why})
            outcome(line, f"✗ rejected: {why}")
            continue
        target, protected = promotion_target(card, pages)
        if protected:
            proposals.append({"card": card.path, "target": target})
            outcome(
                line, f"↺ not promoted: {target} is a {protected} page; the card stays as a proposal for it"
            )
            if not dry:
                raw, body = frontmatter.split(card.text)
                fields = {**frontmatter.parse_mapping(raw), "status": "needs-review", "proposal_for": target}
                vault.write_text(card.path, frontmatter.render(fields, body.lstrip("\n")))
                touched.append(card.path)
            continue
        failed = check_card(card, facts, target, tokenizer().tokenize).failures
        if failed:
            why = "; ".join(failed)
            rejected.append({"card": card.path, "why": why})
            outcome(line, f"✗ rejected at promotion: {why}")
            continue
        promoted.append({"card": card.path, "target": target, "title": card.title})
        outcome(line, f"✓ promoted → [[{target.removesuffix('.md')}]] ({date})", link_to=target)
        if dry:
            continue
        vault.write_text(target, promoted_text(card, date))
        vault.delete(card.path)
        touched += [target, card.path]
        vault.append_ledger(
            ledger_file(PROMOTIONS_DIR, date),
            [
                {
                    "ts": now(),
                    "date": date,
                    "card": card.path,
                    "target": target,
                    "title": card.title,
                    "fingerprint": fp,
                    "sector": sector_for_path(target),
                    "sources": card.sources,
                    "approval": line.file,
                    "auto_approved": line.auto,
                    "run_id": context.run_id,
                }
            ],
        )
        touched.append(ledger_file(PROMOTIONS_DIR, date))
        log = vault.read_text(LOG) if vault.exists(LOG) else "# Log\n"
        if generated.appendable(log):
            vault.write_text(LOG, generated.append(log, f"## [{date}] promote | {card.title}"))
            touched.append(LOG)
        elif not left_alone:
            left_alone.append({"page": LOG, "reason": generated.NO_MARKERS})
            context.log.warning(f"{LOG} left as it is: the promotion is in the ledger only")
    if not dry:
        for rel, text in texts.items():
            vault.write_text(rel, text)
            touched.append(rel)
    if touched:
        titles = ", ".join(p["title"] for p in promoted[:5]) + (" …" if len(promoted) > 5 else "")
        what = f"promote: {len(promoted)} page(s)" + (f" ({titles})" if promoted else "")
        if rejected or proposals:
            what += f", {len(rejected)} rejected, {len(proposals)} proposal(s)"
        vault.commit_at_run_end(what, sorted(set(touched)))
    return MaterializeResult(
        metadata={
            "dry_run": dry,
            "promoted": len(promoted),
            "rejected": len(rejected),
            "proposals": len(proposals),
            "promoted_pages": MetadataValue.json(promoted),
            "rejections": MetadataValue.json(rejected),
            "proposal_cards": MetadataValue.json(proposals),
            "left_alone": MetadataValue.json(left_alone),
        }
    )


@asset_check(
    asset=canonical_wiki,
    blocking=False,
    description="Canonical pages agree with their folder: a `sector:` that disagrees with 20-wiki/<sector>/ is "
    "reported (the path is the truth; the page is not moved back).",
)
def canonical_sectors_match(vault: Vault) -> AssetCheckResult:
    mismatches = [
        {"path": path, "folder": sector_for_path(path) or "", "frontmatter": fm.sector or ""}
        for path, fm, _ in vault.canonical_pages()
        if fm.status in CANONICAL_STATUSES
        and fm.sector
        and sector_for_path(path)
        and fm.sector != sector_for_path(path)
    ]
    return AssetCheckResult(
        passed=not mismatches,
        severity=AssetCheckSeverity.WARN,
        metadata={"mismatches": MetadataValue.json(mismatches), "count": len(mismatches)},
    )


def _replaceable(vault: Vault, rel: str, text: str, seed_body: str) -> bool:
    """A page index_pages may write whole: the untouched `hippo init` seed, or a page it generated before
    the markers existed that git holds exactly as it is (so the old text stays in history)."""
    try:
        raw, body = frontmatter.split(text)
        fields = frontmatter.parse_mapping(raw)
    except frontmatter.FrontmatterError:
        return False
    if body.strip() in (seed_body, ""):
        return True
    return fields.get("generated_by") == GENERATED_BY and vault.is_committed(rel)


@asset(
    group_name=GROUP,
    kinds={"markdown"},
    deps=[canonical_wiki],
    description="HOME.md (canonical pages per sector, queue sizes, recent promotions, what to review first), "
    "index.md (catalogue of canonical pages) and one hub page per sector (20-wiki/<sector>/_hub.md). Only the "
    "block between `<!-- hippo:begin -->` and `<!-- hippo:end -->` is written; a person's text around it is "
    "never touched, and a page whose block a person changed (its fingerprint no longer matches) or that has "
    "no markers is left alone and reported. The same vault gives byte-identical pages.",
)
def index_pages(context: AssetExecutionContext, vault: Vault) -> MaterializeResult:
    pages = [
        PageInfo(
            path=p,
            title=fm.title or p,
            sector=sector_for_path(p) or "general",
            type=fm.type,
            updated=fm.updated,
        )
        for p, fm, _ in vault.canonical_pages()
        if fm.status in CANONICAL_STATUSES
    ]
    open_lines = vault.approval_lines("open")
    verdicts = latest_verdicts(vault.read_ledger(GATES_DIR))
    cards, _ = vault.staged_cards()
    queues = Queues(
        inbox=len(vault.inbox_files()),
        staging=len(cards),
        pending_approvals=len(open_lines),
        gate_failures=sum(1 for c in cards if c.path in verdicts and not verdicts[c.path]["passed"]),
    )
    recent = list(reversed(vault.read_ledger(PROMOTIONS_DIR)))[:10]
    review = [ReviewItem(card=ln.card, title=ln.title, file=ln.file) for ln in open_lines[:10]]
    # page → (title, heading, generated block, body of the `hippo init` seed)
    wanted = {
        "HOME.md": ("Home", "Home", home_block(pages, queues, recent, review), "# Home\n\nStart here."),
        "index.md": ("Index", "Index", index_block(pages), "# Index"),
    }
    for sector in sorted({p.sector for p in pages}):
        block = hub_block(sector, [p for p in pages if p.sector == sector])
        wanted[hub_path(sector)] = (f"{sector} hub", sector, block, "")
    written, refused = [], []
    for rel, (title, heading, block, seed) in wanted.items():
        fresh = new_page(page_fields(title), heading, block)
        if not vault.exists(rel):
            text: str | None = fresh
        else:
            try:
                existing = vault.read_text(rel)
            except BadTextError as exc:
                refused.append({"page": rel, "reason": str(exc)})
                continue
            update = generated.update(existing, block)
            if update.outcome == "no_markers" and _replaceable(vault, rel, existing, seed):
                text = None if existing == fresh else fresh
            elif update.outcome in ("no_markers", "edited"):
                refused.append({"page": rel, "reason": update.reason or update.outcome})
                context.log.warning(f"{rel} left as it is: {update.reason}")
                continue
            else:
                text = update.text
        if text is not None:
            vault.write_text(rel, text)
            written.append(rel)
    if written:
        vault.commit_at_run_end(f"index pages: {', '.join(written)} updated", written)
    return MaterializeResult(
        metadata={
            "canonical_pages": len(pages),
            "written": MetadataValue.json(written),
            "left_alone": MetadataValue.json(refused),
            "queues": MetadataValue.json(queues.model_dump()),
        }
    )
