"""The vault's folder layout, its ledgers and queues, and which folders each stage reads.

Every vault path the pipeline knows is here, so the CLI, the assets, the sensors and the server agree
on what a path means.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from hippo_core.extract import SUFFIXES as DOCUMENT_FORMATS

INBOX = "00-inbox"
INBOX_PROCESSED = "00-inbox/.processed"
TODO = "05-todo"
SOURCES = "10-sources"
WIKI = "20-wiki"
REVIEWS = "30-reviews"
STAGING = "30-reviews/staging"
APPROVALS = "30-reviews/approvals"
OPS = "50-ops"
SKILLS = "40-skills"  # projection of the agent skills: the skill lane only (hippo_suggest), never search
SYSTEM = "90-system"

ARCHIVE = "30-reviews/archive"  # cards the janitor archived (never deleted)
GAP_QUEUE = "30-reviews/gap-queue.md"

# Ledgers written by the pipeline (JSONL; a folder holds one file per day).
GATES_DIR = f"{SYSTEM}/gates"
PROMOTIONS_DIR = f"{SYSTEM}/promotions"
JANITOR_DIR = f"{SYSTEM}/janitor"
COMPILE_LOG = f"{SYSTEM}/compile/log.jsonl"
LOG = "log.md"  # the human-readable log promotion appends to

FOLDERS: tuple[str, ...] = (INBOX, INBOX_PROCESSED, TODO, SOURCES, WIKI, STAGING, APPROVALS, OPS, SYSTEM)
TOP_FILES: tuple[str, ...] = ("HOME.md", "index.md", LOG, "SCHEMA.md")


def approvals_file(date: str) -> str:
    """The approval checklist of one day."""
    return f"{APPROVALS}/{date}.md"


def ledger_file(folder: str, date: str) -> str:
    """One day's file of a ledger folder (GATES_DIR, PROMOTIONS_DIR, JANITOR_DIR)."""
    return f"{folder}/{date}.jsonl"


def is_source_copy(path: str) -> bool:
    """A source copy is any Markdown file under 10-sources/ (ingest writes them at the top; a person may
    file sources in sub-folders, e.g. one per lineage)."""
    return path.startswith(SOURCES + "/") and path.lower().endswith((".md", ".markdown"))


def is_staged_card(path: str) -> bool:
    return path.startswith(STAGING + "/") and path.count("/") == 2


def folder_lineage(path: str) -> str | None:
    """The lineage a source's folder names: 10-sources/<lineage>/... (None at the top of 10-sources/)."""
    parts = PurePosixPath(path).parts
    return parts[1] if len(parts) >= 3 and parts[0] == SOURCES else None


# Never indexed for search: review queues, machine ledgers, the inbox (until ingested) and the
# vault's own schema page, which is boilerplate that every vault shares.
NOT_INDEXED: tuple[str, ...] = (REVIEWS, SYSTEM, INBOX, SKILLS)
NOT_INDEXED_FILES: tuple[str, ...] = ("SCHEMA.md",)

# Navigation pages the index-pages asset generates (HOME, index, the sector hubs) and the promotion log:
# they list pages rather than say anything, so search leaves them out unless asked for them.
NAVIGATION_FILES: tuple[str, ...] = ("HOME.md", "index.md", LOG)
HUB_FILE = "_hub.md"  # 20-wiki/<sector>/_hub.md


def is_navigation_page(path: str, doc_type: str | None) -> bool:
    """True for the HOME.md, index.md, log.md and sector hubs (20-wiki/<sector>/_hub.md) that hippo lays
    out: at those paths and of `type: map`, as `hippo init` seeds them and index_pages writes them. A
    person's own index.md or log.md (any other type, or none) is a note like any other."""
    if doc_type != "map":
        return False
    if path in NAVIGATION_FILES:
        return True
    parts = PurePosixPath(path).parts
    return len(parts) == 3 and parts[0] == WIKI and parts[2] == HUB_FILE


# Inbox files ingest reads: notes as text, documents through `hippo_core.extract` (the original bytes
# are kept beside the Markdown copy). Everything else stays in the inbox and is reported.
TEXT_SUFFIXES: tuple[str, ...] = (".md", ".markdown", ".txt")
DOCUMENT_SUFFIXES: tuple[str, ...] = tuple(DOCUMENT_FORMATS)
INBOX_SUFFIXES: tuple[str, ...] = TEXT_SUFFIXES + DOCUMENT_SUFFIXES

# Content lanes: which part of the vault a chunk comes from. Search can be limited to lanes.
LANES: tuple[str, ...] = ("wiki", "sources", "notes", "conversations")


def lane_for_path(path: str) -> str:
    """Map a vault-relative path to its content lane."""
    top = PurePosixPath(path).parts[0] if path else ""
    if top == WIKI:
        return "wiki"
    if top == SOURCES:
        return "sources"
    return "notes"


def sector_for_path(path: str) -> str | None:
    """The sector is the folder under 20-wiki: the path is the truth, not the frontmatter."""
    parts = PurePosixPath(path).parts
    if len(parts) >= 3 and parts[0] == WIKI:
        return parts[1]
    return None


def is_indexed(path: str) -> bool:
    """True for Markdown files that belong in search (outside reviews, system ledgers and the inbox)."""
    p = PurePosixPath(path)
    if p.suffix.lower() not in (".md", ".markdown"):
        return False
    if any(part.startswith(".") for part in p.parts) or path in NOT_INDEXED_FILES:
        return False
    return not any(path == d or path.startswith(d + "/") for d in NOT_INDEXED)


SCHEMA_SIGNATURE = "This vault is managed by Hippocampus."
"""The line of the SCHEMA.md `hippo init` writes that tells it from a person's own SCHEMA.md."""

SCHEMA_MD = """---
type: map
status: reference
trust: human_edit
title: Vault schema
---

# Vault schema

This vault is managed by Hippocampus. People and agents write; deterministic code promotes.

## Folders

| folder | what lives there |
|---|---|
| `00-inbox/` | drop zone; processed files move to `00-inbox/.processed/` |
| `05-todo/` | research topics and follow-ups |
| `10-sources/` | immutable source copies (the factual ground) |
| `20-wiki/<sector>/` | canonical wiki; the folder is the sector |
| `30-reviews/staging/` | draft cards waiting for approval |
| `30-reviews/approvals/` | checkbox files a human ticks |
| `50-ops/` | shared work memory (worklog, handoff) |
| `90-system/` | ledgers written by the pipeline (do not edit) |

## Frontmatter

```yaml
type:   concept | entity | comparison | query | map | source-summary | conversation
status: draft | canonical | needs-review | archived | reference | raw-source
trust:  source | human_edit | llm_summary | llm_context | web_staging
title, created, updated, tags, sources, aliases, sector, confidence, contested
```

A `human_edit` page is never changed by the pipeline. Moving a page to another sector folder is a
valid edit: the path wins over `sector:`. A value of your own (`status: done`) is kept as written and
ranks neutral; notes without frontmatter take their first heading, else their file name, as title.

## What is read, what is written

- Read: every Markdown note, except hidden folders (`.obsidian/`, `.trash/`), attachments and the
  gitignore-style patterns of `.hippoignore` at the vault root.
- Written: HOME, index, log and the sector hubs only between `<!-- hippo:begin -->` and
  `<!-- hippo:end -->`; text around the markers is yours. Edit inside them and the page is left alone.
"""
