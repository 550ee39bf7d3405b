"""The compile queue: which source copies still need compiling, keyed by partition and content hash."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from hippo_core import frontmatter
from hippo_core.sources import body_hash
from hippo_core.vault_layout import SOURCES, SYSTEM

COMPILE_LOG = f"{SYSTEM}/compile/log.jsonl"
PARTITIONS = "source_documents"


def partition_key_for(source_path: str) -> str:
    """One partition per source copy: its file name without folder and suffix."""
    return source_path.removeprefix(SOURCES + "/").removesuffix(".md")


def source_for(key: str) -> str:
    return f"{SOURCES}/{key}.md"


def is_source_copy(rel: str) -> bool:
    return rel.startswith(SOURCES + "/") and rel.count("/") == 1 and rel.endswith(".md")


def source_digest(text: str) -> str:
    """The source's declared sha256 (ingest copies), or the hash of its body (sources filed by hand)."""
    raw, body = frontmatter.split(text)
    declared = frontmatter.parse_mapping(raw).get("sha256")
    return str(declared) if declared else body_hash(body)


def compiled(log_text: str) -> set[tuple[str, str]]:
    """(source, sha256) pairs the compile log says are done."""
    out = set()
    for line in log_text.splitlines():
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            continue
        out.add((str(r.get("source", "")), str(r.get("sha256", ""))))
    return out


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
