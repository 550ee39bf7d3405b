"""Group `compile`: sources become LLM (or offline) staging cards, judged and gated, then offered for approval."""

# No `from __future__ import annotations` here: Dagster reads the Config and resource
# annotations of asset functions at definition time and cannot resolve them from strings.

from dagster import (
    AssetCheckResult,
    AssetExecutionContext,
    AssetKey,
    Config,
    DynamicPartitionsDefinition,
    Failure,
    MaterializeResult,
    MetadataValue,
    asset,
    asset_check,
)
from pydantic import Field

from expectations.gate_suites import failures as gate_failures
from expectations.gate_suites import gate_check, gate_frame
from hippo_assets.clock import now, today
from hippo_assets.compile import GROUP
from hippo_assets.compile.related import related_pages, tokenizer
from hippo_assets.index.assets import lexical_index
from hippo_assets.ingest.assets import sources
from hippo_core.vault import frontmatter
from hippo_core.vault.sources import read_source_file
from hippo_core.vault.vault_layout import COMPILE_LOG, GATES_DIR, SOURCES, approvals_file, ledger_file
from hippo_core.wiki import approvals
from hippo_core.wiki.cards import Card, CompileOutput, fingerprint, render_card, staging_path
from hippo_core.wiki.compile_offline import (
    OFFLINE_COMPILER,
    OFFLINE_JUDGE,
    card_trust,
    offline_compile,
    offline_judge,
)
from hippo_core.wiki.compile_queue import PARTITIONS, compiled, source_for
from hippo_core.wiki.gates import (
    CitationCheck,
    VaultFacts,
    build_facts,
    check_card,
    gate_row,
    latest_verdicts,
    promotion_target,
    run_gates,
    split_anchor,
)
from hippo_resources import LexicalStore, Vault
from hippo_resources.llm import LLM, LLMError, Usage

source_documents = DynamicPartitionsDefinition(name=PARTITIONS)


class CompileConfig(Config):
    force: bool = Field(
        default=False, description="Compile again even if this source was compiled at this content."
    )


@asset(
    group_name=GROUP,
    kinds={"anthropic", "markdown"},
    partitions_def=source_documents,
    deps=[sources, lexical_index],  # reads a source copy; asks the lexical index for related pages
    description="For one source document (partition): the LLM compiler (anthropic + instructor) proposes "
    "concept/entity/comparison/query/source-summary cards citing path#heading anchors, using the canonical "
    "pages our own search relates to it; without ANTHROPIC_API_KEY the offline compiler writes a "
    "source-summary card. Cards land in 30-reviews/staging/ as status draft. Token usage is in the metadata.",
)
def staging_cards(
    context: AssetExecutionContext, config: CompileConfig, vault: Vault, lexical_store: LexicalStore, llm: LLM
) -> MaterializeResult:
    src = source_for(context.partition_key)
    if not vault.exists(src):
        raise Failure(f"no source copy {src}: the partition names a document that is not in {SOURCES}/")
    text = vault.read_text(src)
    fm, body = frontmatter.parse(text, src)
    source = read_source_file(src, text)
    digest = source.content_hash
    usage = Usage()
    if (src, digest) in compiled(vault.read_ledger(COMPILE_LOG)) and not config.force:
        context.log.info(f"{src} was already compiled at this content: nothing to do (no LLM call)")
        return MaterializeResult(
            metadata={
                "source": src,
                "cards": 0,
                "skipped": "already compiled",
                "llm_calls": 0,
                "total_tokens": 0,
            }
        )
    title = fm.title or src
    related = related_pages(lexical_store, f"{title}\n{body[:1500]}")
    if llm.enabled:
        compiler = llm.name
        try:
            output, usage = llm.compile(src, text, related)
        except LLMError as exc:
            raise Failure(str(exc)) from None
        # the source decides the lineage, not the model: a card is of its source's lineage (or of none)
        output = with_lineage(output, source.lineage)
    else:
        compiler = OFFLINE_COMPILER
        output = offline_compile(src, text, related)
    written, touched = [], []
    trust = card_trust([fm.trust])
    for draft in output.cards:
        path = staging_path(draft.title)
        if vault.exists(path):
            existing = frontmatter.parse_mapping(frontmatter.split(vault.read_text(path))[0])
            if existing.get("source_doc") != src:
                path = path.removesuffix(".md") + f"-{digest[:8]}.md"
        card_text = render_card(
            draft, sources=[src], compiler=compiler, trust=trust, created=today(), source_doc=src
        )
        vault.write_text(path, card_text)
        written.append(path)
        touched.append(path)
    vault.append_ledger(
        COMPILE_LOG,
        [
            {
                "ts": now(),
                "source": src,
                "sha256": digest,
                "compiler": compiler,
                "cards": written,
                **usage.model_dump(),
            }
        ],
    )
    touched.append(COMPILE_LOG)
    vault.commit_at_run_end(f"compile: {len(written)} card(s) from {src}", touched)
    return MaterializeResult(
        metadata={
            "source": src,
            "compiler": compiler,
            "cards": len(written),
            "card_paths": MetadataValue.json(written),
            "related_pages": MetadataValue.json([p.path for p in related]),
            "llm_calls": usage.calls,
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "total_tokens": usage.total,
        }
    )


def with_lineage(output: CompileOutput, lineage: str | None) -> CompileOutput:
    return CompileOutput(cards=[d.model_copy(update={"lineage": lineage}) for d in output.cards])


class GateConfig(Config):
    rejudge: bool = Field(
        default=False, description="Judge cards again even if unchanged since their last verdict."
    )


def _judge(
    card: Card, checks: list[CitationCheck], facts: VaultFacts, llm: LLM, usage_box: list[Usage]
) -> tuple[str, dict]:
    """The judge's advice: the LLM when configured (within the run's token budget), else the offline judge."""
    if not llm.enabled:
        return OFFLINE_JUDGE, offline_judge(card.body, checks, card.confidence).model_dump()
    cited = {}
    for c in card.citations:
        path, heading = split_anchor(c.anchor)
        section = facts.sections.get(path, {}).get(heading or "")
        if section is not None:
            cited[c.anchor] = section
    if usage_box[0].total >= llm.run_token_budget:
        return llm.name, {
            "decision": "revise",
            "reasons": ["token budget of this run used up: judge again later"],
        }
    try:
        verdict, usage = llm.judge(card.text, cited)
    except LLMError as exc:
        return llm.name, {"decision": "revise", "reasons": [f"judge unavailable: {exc}"]}
    usage_box[0] = usage_box[0].add(usage)
    return llm.name, verdict.model_dump()


@asset(
    group_name=GROUP,
    kinds={"anthropic", "json"},
    # the dream's merge cards land in staging too, and the dream job judges them here (issue 26)
    deps=[staging_cards, AssetKey("dream_merges")],
    description="Every draft card judged (LLM judge or the offline judge: accept/revise/reject with reasons), its "
    "citations verified (anchor resolves; the section holds the quote or the claim's key terms) and the seven "
    "deterministic promotion gates applied. Verdicts are appended to 90-system/gates/<date>.jsonl.",
)
def gate_verdicts(
    context: AssetExecutionContext, config: GateConfig, vault: Vault, llm: LLM
) -> MaterializeResult:
    cards, unreadable = vault.staged_cards()
    facts = build_facts(vault.texts())
    pages = vault.canonical_pages()
    previous = latest_verdicts(vault.read_ledger(GATES_DIR))
    usage_box = [Usage()]
    records, failures = [], []
    for card in cards:
        fp = fingerprint(card.text)
        prev = previous.get(card.path)
        if prev and prev.get("fingerprint") == fp and not config.rejudge:
            continue  # unchanged since its verdict: no second judge call
        check = check_card(card, facts, promotion_target(card, pages)[0], tokenizer().tokenize)
        checks = check.citations
        judge_by, judge = _judge(card, checks, facts, llm, usage_box)
        failed = [{"gate": g.gate, "why": g.reason} for g in check.gates if not g.passed]
        passed = check.passed and judge["decision"] == "accept"
        records.append(
            {
                "ts": now(),
                "card": card.path,
                "title": card.title,
                "fingerprint": fp,
                "passed": passed,
                "failed_gates": failed,
                "citations": [c.model_dump() for c in checks],
                "judge": {"by": judge_by, **judge},
            }
        )
        if not passed:
            failures.append(
                {"card": card.path, "gates": failed, "judge": judge["decision"], "reasons": judge["reasons"]}
            )
    ledger = ledger_file(GATES_DIR, today())
    vault.append_ledger(ledger, records)
    if records:
        vault.commit_at_run_end(f"gates: {len(records)} verdict(s)", [ledger])
    usage = usage_box[0]
    return MaterializeResult(
        metadata={
            "cards": len(cards),
            "judged": len(records),
            "passed": sum(r["passed"] for r in records),
            "failed": len(failures),
            "failures": MetadataValue.json(failures),
            "unreadable_cards": MetadataValue.json(unreadable),
            "llm_calls": usage.calls,
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "total_tokens": usage.total,
        }
    )


def offered_cards(vault: Vault) -> tuple[list[Card], list[Card]]:
    """(cards whose latest verdict passed at their current fingerprint, all other drafts)."""
    verdicts = latest_verdicts(vault.read_ledger(GATES_DIR))
    cards, _ = vault.staged_cards()
    ok, other = [], []
    for card in cards:
        v = verdicts.get(card.path)
        (ok if v and v["passed"] and v["fingerprint"] == fingerprint(card.text) else other).append(card)
    return ok, other


@asset_check(
    asset=gate_verdicts,
    blocking=True,
    description="The seven promotion gates (GX suite), re-read from disk, hold for every card about to be offered "
    "for approval; the metadata names each failing gate, card and reason, also for cards held back.",
)
def promotion_gates_hold(vault: Vault) -> AssetCheckResult:
    facts = build_facts(vault.texts())
    pages = vault.canonical_pages()
    ok, other = offered_cards(vault)

    def row(c: Card) -> dict:
        return gate_row(c, run_gates(c, facts, promotion_target(c, pages)[0]))

    held_back = gate_frame([row(c) for c in other])
    return gate_check(
        "promotion_gates",
        gate_frame([row(c) for c in ok]),
        {
            "held_back_failures": MetadataValue.json(gate_failures(held_back)),
            "held_back_cards": held_back.height,
        },
    )


class ApprovalConfig(Config):
    auto_approve: bool = Field(
        default=False, description="Tick the boxes itself (opt-in; every gate still runs at promotion)."
    )


@asset(
    group_name=GROUP,
    kinds={"markdown"},
    deps=[gate_verdicts],
    description="One `- [ ]` line per card that passed, with the card's fingerprint, in "
    "30-reviews/approvals/<date>.md. `auto_approve` (HIPPO_AUTO_APPROVE in compile_job) ticks the boxes itself "
    "(the gates still run at promotion).",
)
def approval_requests(
    context: AssetExecutionContext, config: ApprovalConfig, vault: Vault
) -> MaterializeResult:
    auto = config.auto_approve
    ok, _ = offered_cards(vault)
    # a card back in staging after its line was answered (e.g. compiled again after promotion) is offered again
    listed = {(ln.card, ln.fingerprint) for ln in vault.approval_lines("open", "ticked")}
    lines = [
        approvals.render_line(c.path, c.title, fingerprint(c.text), auto=auto)
        for c in ok
        if (c.path, fingerprint(c.text)) not in listed
    ]
    target = approvals_file(today())
    if lines:
        text = vault.read_text(target) if vault.exists(target) else approvals.new_file(today())
        if not text.endswith("\n"):
            text += "\n"
        vault.write_text(target, text + "\n".join(lines) + "\n")
        vault.commit_at_run_end(f"approvals: {len(lines)} card(s) to review", [target])
    return MaterializeResult(
        metadata={"requested": len(lines), "auto_approved": auto, "file": target if lines else ""}
    )
