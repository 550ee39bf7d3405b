"""Generated text inside a person's page: only between `<!-- hippo:begin … -->` and `<!-- hippo:end -->`.

HOME, index, log and the sector hubs are pages a person may edit. The pipeline writes only between the
marker lines and never touches the text around them. The begin line carries a fingerprint of the block
as written; when the block no longer matches it, a person changed it, and the page is left alone and
reported. Pure: text in, text out.

    ---
    title: Home
    ---
    # Home

    My own line, kept.
    <!-- hippo:begin 3f2a9c1d0b7e6a54 -->
    …generated…
    <!-- hippo:end -->
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from hippo_core.vault import frontmatter
from hippo_core.vault.fingerprints import sha256_text

BEGIN = "<!-- hippo:begin"
END = "<!-- hippo:end -->"
HOW_TO_REGENERATE = (
    "to let it regenerate, empty the lines between the hippo markers (keep the marker lines), "
    "or delete the page"
)

NO_MARKERS = (
    "the page has no hippo markers; add the lines `<!-- hippo:begin -->` and `<!-- hippo:end -->` where the "
    "generated part should go"
)

Outcome = Literal["written", "unchanged", "edited", "no_markers"]


class Update(BaseModel):
    outcome: Outcome
    text: str | None = None  # the page to write when outcome is "written"
    reason: str | None = None  # why the page was left alone, for the run metadata


def fingerprint(inner: str) -> str:
    return sha256_text(inner.strip("\n"))[:16]


def block(inner: str) -> str:
    """The marked block holding `inner`, its fingerprint on the begin line."""
    inner = inner.strip("\n")
    return f"{BEGIN} {fingerprint(inner)} -->\n{inner}\n{END}\n"


def new_page(fields: dict, heading: str, inner: str) -> str:
    """A page that does not exist yet: frontmatter, its heading (the person's to change), the block."""
    return frontmatter.render(fields, f"# {heading}\n\n{block(inner)}")


def find_block(text: str) -> tuple[int, int, str, str] | None:
    """(start, end, stored fingerprint, inner) of the first marked block, or None. Lines are scanned
    once; a begin without an end is no block."""
    pos = 0
    start = -1
    stored = ""
    inner_from = 0
    while pos <= len(text):
        nl = text.find("\n", pos)
        line_end = len(text) if nl == -1 else nl
        line = text[pos:line_end].strip()
        if start < 0 and line.startswith(BEGIN) and line.endswith("-->"):
            start, inner_from = pos, line_end + 1
            stored = line[len(BEGIN) : -3].strip()
        elif start >= 0 and line == END:
            inner = text[inner_from:pos] if pos > inner_from else ""
            return start, (len(text) if nl == -1 else nl + 1), stored, inner.strip("\n")
        if nl == -1:
            break
        pos = nl + 1
    return None


def update(existing: str, inner: str) -> Update:
    """Put a fresh block into an existing page, or say why the page is left alone."""
    found = find_block(existing)
    if found is None:
        return Update(outcome="no_markers", reason=NO_MARKERS)
    start, end, stored, current = found
    if current.strip() and stored != fingerprint(current):
        return Update(outcome="edited", reason=f"a person changed the generated block; {HOW_TO_REGENERATE}")
    text = existing[:start] + block(inner) + existing[end:]
    return Update(outcome="unchanged") if text == existing else Update(outcome="written", text=text)


def appendable(existing: str) -> bool:
    """Whether `append` may add to this page: it has the markers, or it is the `type: map` page hippo
    laid out (`hippo init`'s seed, from before the markers). A person's own page of that name is not."""
    if find_block(existing) is not None:
        return True
    try:
        raw, _ = frontmatter.split(existing)
        return frontmatter.parse_mapping(raw).get("type") == "map"
    except frontmatter.FrontmatterError:
        return False


def append(existing: str, entry: str) -> str:
    """Add a line to a page's block (the log): kept inside the markers, nothing around them touched.
    A page without markers (see `appendable`) gets a block at its end."""
    found = find_block(existing)
    if found is None:
        sep = (
            "" if not existing or existing.endswith("\n\n") else ("\n" if existing.endswith("\n") else "\n\n")
        )
        return existing + sep + block(entry)
    start, end, _, current = found
    inner = f"{current}\n\n{entry}" if current.strip() else entry
    return existing[:start] + block(inner) + existing[end:]
