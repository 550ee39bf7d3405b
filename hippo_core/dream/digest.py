"""The dream's digest page (`50-ops/digest/YYYY-MM-DD.md`): what arrived, lint findings by layer with a
`[[link]]` to each note, pending reviews, what is heating and cooling with a small chart of the 90-day
profile, gaps asked more than once. Rendered as the inside of a generated block (hippo markers), so a
person's text around it survives the next run. The chart is a PNG made here (no plotting library)."""

from __future__ import annotations

import struct
import zlib
from collections import defaultdict
from collections.abc import Sequence
from pathlib import PurePosixPath

from pydantic import BaseModel, Field

from hippo_core.dream.lint import Finding, PendingReview
from hippo_core.dream.profile import Profile

DIGEST_DIR = "50-ops/digest"
LAYER_NAMES = {1: "structure", 2: "grounding", 3: "meaning (LLM)", 4: "high impact (proposals)"}
MAX_PER_RULE = 50  # a long list is cut with a count; the run metadata has every finding


def digest_path(day: str) -> str:
    return f"{DIGEST_DIR}/{day}.md"


def chart_path(day: str) -> str:
    return f"{DIGEST_DIR}/{day}-profile.png"


class Arrivals(BaseModel):
    notes: list[str] = Field(default_factory=list)
    sources: list[str] = Field(default_factory=list)
    sessions: int = 0
    checkpoints: int = 0


class Gap(BaseModel):
    query: str
    times_asked: int
    last_seen: str


class MergeCard(BaseModel):
    """A merge card the dream drafted, as the compile domain's gates left it."""

    card: str
    a: str
    b: str
    state: str  # "passed the gates: waiting for your tick in <file>", "held back: <why>", "not judged yet"
    approvals: str | None = None  # the approvals file listing it


class MergeCandidate(BaseModel):
    a: str
    b: str
    why: str


class DigestInput(BaseModel):
    day: str
    gate_reason: str
    arrivals: Arrivals
    findings: list[Finding]
    pending: list[PendingReview]
    profile: Profile | None = None
    gaps: list[Gap] = Field(default_factory=list)
    skipped_layers: dict[int, str] = Field(default_factory=dict)  # layer -> why it did not run
    consolidation: dict[str, int] = Field(default_factory=dict)
    has_chart: bool = False
    known_paths: set[str] | None = None  # notes that exist: any other path is shown as code, not a link
    merge_cards: list[MergeCard] = Field(default_factory=list)
    merge_candidates: list[MergeCandidate] = Field(default_factory=list)  # listed when no card is drafted
    merge_note: str = ""  # why no card was drafted (no LLM, or the per-run cap)
    would_apply: dict[str, int] = Field(default_factory=dict)  # consolidation in dry-run: what it would do


def _link(path: str, line: int | None = None) -> str:
    """An Obsidian link to a note (the `.md` dropped, as Obsidian writes them). `|` and `]` in a path
    would break the link, so such a path is shown as code instead."""
    if not path:
        return "(no note)"
    if any(c in path for c in "|[]#^"):
        return f"`{path}`"
    target = path[:-3] if path.endswith(".md") else path
    return f"[[{target}]]" + (f" (line {line})" if line else "")


def _esc(text: str) -> str:
    """Finding text in a list item: on one line, with no wikilink or HTML comment that could be read back."""
    return " ".join(text.replace("[[", "[ [").replace("<!--", "< !--").split())[:300]


def render(d: DigestInput) -> str:
    def link(path: str, line: int | None = None) -> str:
        if d.known_paths is not None and path and path not in d.known_paths:
            return f"`{path}` (not in the vault)"
        return _link(path, line)

    out = [f"Dream of {d.day}: {d.gate_reason}.", "", "## Arrived since the last dream", ""]
    a = d.arrivals
    out.append(
        f"- {len(a.notes)} note(s), {len(a.sources)} source(s), {a.sessions} conversation session(s), "
        f"{a.checkpoints} checkpoint(s)"
    )
    for p in (a.sources + a.notes)[:20]:
        out.append(f"  - {link(p)}")
    if d.consolidation:
        out += ["", "## Consolidation", ""]
        out += [f"- {k}: {v}" for k, v in sorted(d.consolidation.items())]
    if d.would_apply:
        out += [
            "",
            "Dry run (HIPPO_DREAM_APPLY is off): the dream would apply "
            + ", ".join(f"{v} {k}" for k, v in sorted(d.would_apply.items()))
            + ".",
        ]
    out += ["", "## Duplicate concepts", ""]
    if d.merge_cards:
        for m in d.merge_cards:
            where = f" in {link(m.approvals)}" if m.approvals else ""
            out.append(f"- merge card {link(m.card)} for {link(m.a)} and {link(m.b)}: {_esc(m.state)}{where}")
    if d.merge_candidates:
        out.append(
            f"- {len(d.merge_candidates)} candidate pair(s), not confirmed: {_esc(d.merge_note)}"
            if d.merge_note
            else f"- {len(d.merge_candidates)} candidate pair(s):"
        )
        for c in d.merge_candidates[:MAX_PER_RULE]:
            out.append(f"  - {link(c.a)} · {link(c.b)}: {_esc(c.why)}")
    elif d.merge_note:
        out.append(f"- {_esc(d.merge_note)}")
    if not d.merge_cards and not d.merge_candidates and not d.merge_note:
        out.append("None found.")
    out += ["", "## Lint", ""]
    by_layer: dict[int, list[Finding]] = defaultdict(list)
    for f in d.findings:
        by_layer[f.layer].append(f)
    for layer in (1, 2, 3, 4):
        found = by_layer.get(layer, [])
        skipped = d.skipped_layers.get(layer)
        title = f"### Layer {layer}: {LAYER_NAMES[layer]}"
        if skipped:
            out += [title, "", f"Skipped: {_esc(skipped)}", ""]
            continue
        out += [title, "", f"{len(found)} finding(s)." if found else "Nothing found.", ""]
        by_rule: dict[str, list[Finding]] = defaultdict(list)
        for f in found:
            by_rule[f.rule].append(f)
        for rule in sorted(by_rule):
            items = by_rule[rule]
            out.append(f"- **{rule}** ({len(items)})")
            for f in items[:MAX_PER_RULE]:
                extra = "".join(f" · {link(r)}" for r in f.related[:5])
                out.append(f"  - {link(f.path, f.line)}: {_esc(f.detail)}{extra}")
            if len(items) > MAX_PER_RULE:
                out.append(f"  - … and {len(items) - MAX_PER_RULE} more (the run's metadata lists all)")
        out.append("")
    out += ["## Waiting for your review", ""]
    if d.pending:
        for p in sorted(d.pending, key=lambda r: r.created):
            out.append(f"- since {p.created}: {link(p.path)} {_esc(p.summary)}")
    else:
        out.append("Nothing waiting.")
    out += ["", "## Interests", ""]
    if d.profile is None:
        out.append("No profile yet.")
    else:
        if d.has_chart:
            out += [f"![[{PurePosixPath(chart_path(d.day)).name}]]", ""]
        for w in d.profile.windows:
            subjects = ", ".join(f"{_esc(t)} ({n})" for t, n in w.subjects[:5]) or "—"
            out.append(f"- last {w.days} days: {subjects}")
        heating = ", ".join(f"{_esc(t.term)} ({t.before}→{t.last_7})" for t in d.profile.heating[:8]) or "—"
        cooling = ", ".join(f"{_esc(t.term)} ({t.before}→0)" for t in d.profile.cooling[:8]) or "—"
        out += [f"- heating: {heating}", f"- cooling: {cooling}"]
    out += ["", "## Questions that failed more than once", ""]
    if d.gaps:
        for g in d.gaps:
            out.append(
                f"- “{_esc(g.query)}”: {g.times_asked} times, last {g.last_seen} — needs more material"
            )
    else:
        out.append("None.")
    return "\n".join(out) + "\n"


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return (
        struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    )


def bar_chart_png(values: Sequence[int], bar_width: int = 3, height: int = 60) -> bytes:
    """A grey-on-white bar chart, one bar per value, as PNG bytes (8-bit greyscale)."""
    width = max(1, len(values) * bar_width)
    top = max(values) if values and max(values) > 0 else 1
    heights = [round(v / top * (height - 2)) for v in values]
    rows = []
    for y in range(height):
        level = height - 1 - y
        row = bytearray(b"\x00")  # filter type: none
        for h in heights:
            px = 0x55 if h and level < h else (0xDD if level == 0 else 0xFF)
            row += bytes([px]) * (bar_width - 1) + b"\xff"
        rows.append(bytes(row))
    raw = b"".join(rows)
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", zlib.compress(raw, 9))
        + _png_chunk(b"IEND", b"")
    )


link = _link
