"""The inbox files left waiting (refused or not read), with the reason and what to do: a page in the vault.

Ingest leaves a file in `00-inbox/` when it cannot take it (too large, encrypted, corrupt, empty, not
UTF-8, an unsupported type, a symlink). A person in Obsidian sees why on `30-reviews/inbox-waiting.md`,
generated between markers; the list itself is kept in `90-system/inbox/waiting.json` so a run that looks
at a few files (the inbox sensor's batches) updates only their rows. A file that later succeeds, or that
the person removes, leaves the list. Pure: lists in, text out.
"""

from __future__ import annotations

import json

from pydantic import BaseModel

from hippo_core.wiki import generated

PAGE = "30-reviews/inbox-waiting.md"
STATE = "90-system/inbox/waiting.json"

ADVICE = {
    "too_large": "split it, or raise HIPPO_INBOX_MAX_BYTES / HIPPO_INBOX_MAX_CHARS; the next run retries it",
    "encrypted": "save a copy without the password into the inbox, and delete this one",
    "corrupt": "export or save it again from the program that made it, and put the new file in the inbox",
    "empty": "a scan without text needs OCR first (e.g. `ocrmypdf in.pdf out.pdf`); an empty file can go",
    "unsupported": "convert it to Markdown, text, PDF, DOCX, XLSX, PPTX, HWPX or HTML, or move it out",
    "symlink": "copy the file itself into the inbox (links are not followed there), and remove the link",
    "BadTextError": "save it as UTF-8 text (your editor's 'save with encoding'); the next run retries it",
    "FrontmatterError": "fix the YAML between the --- lines at the top (the reason names the line)",
}
DEFAULT_ADVICE = "fix the file or move it out of the inbox; the next run retries it"


class Waiting(BaseModel):
    file: str  # vault-relative, in 00-inbox/
    kind: str
    reason: str
    since: str  # ISO time the file was first left waiting

    @property
    def todo(self) -> str:
        return ADVICE.get(self.kind, DEFAULT_ADVICE)


def merge(
    previous: list[Waiting], looked_at: set[str], found: list[Waiting], inbox_now: set[str]
) -> list[Waiting]:
    """The list after a run: the run's findings for the files it looked at (keeping when each was first
    seen), the earlier rows for the files it did not look at, and nothing for files gone from the inbox."""
    before = {w.file: w for w in previous}
    rows = [w for w in previous if w.file not in looked_at and w.file in inbox_now]
    rows += [w.model_copy(update={"since": before[w.file].since}) if w.file in before else w for w in found]
    return sorted({w.file: w for w in rows}.values(), key=lambda w: w.file)


def parse_state(text: str | None) -> list[Waiting]:
    """The stored list; an unreadable one counts as empty (the next full run rebuilds it)."""
    if not text:
        return []
    try:
        return [Waiting.model_validate(row) for row in json.loads(text)]
    except (ValueError, TypeError):
        return []


def render_state(rows: list[Waiting]) -> str:
    return json.dumps([r.model_dump() for r in rows], ensure_ascii=False, indent=1) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_inner(rows: list[Waiting]) -> str:
    if not rows:
        return "Nothing is waiting: every file put in `00-inbox/` was taken in."
    lines = [
        f"{len(rows)} file(s) stay in `00-inbox/` until fixed; each run tries them again.",
        "",
        "| file | why it waits | what to do | since |",
        "|---|---|---|---|",
    ]
    lines += [f"| [[{r.file}]] | {_cell(r.reason)} | {_cell(r.todo)} | {r.since[:10]} |" for r in rows]
    return "\n".join(lines)


def page_update(existing: str | None, rows: list[Waiting]) -> generated.Update:
    """The page with a fresh list between its markers (a new page if there is none)."""
    inner = render_inner(rows)
    if existing is None:
        fields = {
            "type": "map",
            "status": "reference",
            "trust": "llm_context",
            "title": "Inbox: waiting files",
        }
        return generated.Update(
            outcome="written", text=generated.new_page(fields, "Inbox: waiting files", inner)
        )
    return generated.update(existing, inner)
