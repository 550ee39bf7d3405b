"""Vault reads and ledger writes shared by the compile and publish groups."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from hippo_core import frontmatter
from hippo_core.cards import Card, parse_card
from hippo_core.compile_offline import RelatedPage
from hippo_core.frontmatter import FrontmatterError
from hippo_core.gates import VaultFacts, build_facts
from hippo_core.sources import slugify
from hippo_core.text_input import BadTextError, decode_utf8
from hippo_core.tokenize import Tokenizer, TokenizerConfig
from hippo_core.vault_layout import STAGING, SYSTEM, WIKI
from hippo_resources import LexicalStore, Vault

GATES_DIR = f"{SYSTEM}/gates"
PROMOTIONS_DIR = f"{SYSTEM}/promotions"
JANITOR_DIR = f"{SYSTEM}/janitor"

_TOKENIZER: Tokenizer | None = None


def tokenizer() -> Tokenizer:
    global _TOKENIZER
    if _TOKENIZER is None:
        _TOKENIZER = Tokenizer(TokenizerConfig())
    return _TOKENIZER


def today() -> str:
    """Local date: approval files and ledgers are named by the day a person sees."""
    return dt.date.today().isoformat()


def now() -> str:
    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()


def read_text(vault: Vault, rel: str) -> str:
    return decode_utf8(vault.read_bytes(rel), rel)


def read_texts(vault: Vault) -> dict[str, str]:
    """Every readable Markdown file (path → text); files that are not UTF-8 are left out."""
    out = {}
    for rel in vault.markdown_files():
        try:
            out[rel] = read_text(vault, rel)
        except BadTextError:
            continue
    return out


def load_facts(vault: Vault) -> VaultFacts:
    return build_facts(read_texts(vault))


def staged_cards(vault: Vault) -> tuple[list[Card], list[dict[str, str]]]:
    """Draft cards in 30-reviews/staging/ and the files that could not be read as cards."""
    cards, errors = [], []
    for rel in vault.markdown_files():
        if not rel.startswith(STAGING + "/") or rel.count("/") != 2:
            continue
        try:
            card = parse_card(rel, read_text(vault, rel))
        except (BadTextError, FrontmatterError) as exc:
            errors.append({"card": rel, "error": str(exc)})
            continue
        if card.status == "draft":
            cards.append(card)
    return cards, errors


def canonical_pages(vault: Vault) -> list[tuple[str, frontmatter.Frontmatter, str]]:
    """(path, frontmatter, body) of every readable page under 20-wiki/."""
    out = []
    for rel in vault.markdown_files():
        if not rel.startswith(WIKI + "/"):
            continue
        try:
            fm, body = frontmatter.parse(read_text(vault, rel), rel)
        except (BadTextError, FrontmatterError):
            continue
        out.append((rel, fm, body))
    return out


def append_jsonl(vault: Vault, rel: str, records: list[dict[str, Any]]) -> None:
    """Append records to a JSONL ledger (rewritten atomically: a reader never sees half a line)."""
    if not records:
        return
    old = read_text(vault, rel) if vault.exists(rel) else ""
    if old and not old.endswith("\n"):
        old += "\n"
    new = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records)
    vault.write_text(rel, old + new)


def read_jsonl(vault: Vault, folder_or_file: str) -> list[dict[str, Any]]:
    """Records of one JSONL file, or of every `*.jsonl` in a folder (in file-name order)."""
    root = vault.abs(folder_or_file)
    files = sorted(root.glob("*.jsonl")) if root.is_dir() else ([root] if root.exists() else [])
    out = []
    for f in files:
        for line in f.read_text(encoding="utf-8").splitlines():
            if line.strip():
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
    return out


def related_pages(lexical_store: LexicalStore, query: str, k: int = 3) -> list[RelatedPage]:
    """Canonical wiki pages our own lexical index finds for a text (empty before the first index build)."""
    manifest = lexical_store.manifest()
    if manifest is None or not query.strip():
        return []
    index, table = lexical_store.load(manifest["generation"])
    if table.height == 0:
        return []
    mask = ((table["lane"] == "wiki") & (table["status"] == "canonical")).to_numpy()
    tokens = tokenizer().query_tokens(query[:2000])
    out: list[RelatedPage] = []
    seen: set[str] = set()
    for i, _score in index.top_k(tokens, k * 8, allowed=mask):
        row = table.row(i, named=True)
        if row["path"] in seen:
            continue
        seen.add(row["path"])
        out.append(
            RelatedPage(path=row["path"], title=row["title"], sector=row["sector"], excerpt=row["text"][:600])
        )
        if len(out) == k:
            break
    return out


def promotion_target(card: Card, pages: list[tuple[str, frontmatter.Frontmatter, str]]) -> tuple[str, bool]:
    """Where the card goes, and whether that is a human_edit page (never overwritten).

    A page with the card's title is updated where it lives now: a page a person moved to another sector
    folder stays there (the path is the truth).
    """
    for path, fm, _ in pages:
        if (fm.title or "").strip().lower() == card.title.strip().lower() and (fm.model_extra or {}).get(
            "generated_by"
        ) is None:
            return path, fm.trust == "human_edit"
    target = f"{WIKI}/{card.sector or 'general'}/{slugify(card.title)}.md"
    for path, fm, _ in pages:
        if path == target:
            return path, fm.trust == "human_edit"
    return target, False
