"""The compile queue: which source copies still need compiling, keyed by partition and content hash."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from hippo_core.vault.sources import SourceFile
from hippo_core.vault.vault_layout import SOURCES

PARTITIONS = "source_documents"


def partition_key_for(source_path: str) -> str:
    """One partition per source copy: its path under 10-sources/ without the `.md` suffix."""
    return source_path.removeprefix(SOURCES + "/").removesuffix(".md")


def source_for(key: str) -> str:
    return f"{SOURCES}/{key}" + ("" if key.endswith(".markdown") else ".md")


def compiled(compile_log: Iterable[Mapping[str, object]]) -> set[tuple[str, str]]:
    """(source, content hash) pairs the compile log's records say are done."""
    return {(str(r.get("source", "")), str(r.get("sha256", ""))) for r in compile_log}


def pending(copies: Iterable[SourceFile], compile_log: Iterable[Mapping[str, object]]) -> list[SourceFile]:
    """Source copies not compiled at their current content."""
    done = compiled(compile_log)
    return [c for c in copies if (c.path, c.content_hash) not in done]


def gap_relevance(source_tokens: Sequence[str], gap_term_sets: Sequence[set[str]]) -> float:
    """How much of the best-matching open gap a source covers (0..1): a card from it could fill that gap."""
    present = set(source_tokens)
    return max((len(terms & present) / len(terms) for terms in gap_term_sets if terms), default=0.0)


def order_by_gaps(
    pending: Sequence[tuple[str, str, str]],
    gap_queries: Sequence[str],
    tokenize: Callable[[str], list[str]],
) -> list[tuple[str, str, float]]:
    """Pending (path, digest, text) ordered so sources that could fill open gaps compile first."""
    gap_terms = [{t for t in tokenize(q) if not t.startswith("\u1d47")} for q in gap_queries]
    scored = [
        (rel, digest, round(gap_relevance(tokenize(text), gap_terms), 3)) for rel, digest, text in pending
    ]
    return sorted(scored, key=lambda r: (-r[2], r[0]))
