"""The frontmatter contract: parse, validate and write YAML frontmatter.

Pipeline files (cards, source copies) that break the contract are reported and skipped by the caller;
a person's note is read leniently (`parse_note`): values outside the vocabulary are kept as written and
reported, never a reason to drop the note. Every writer goes through `render` (a YAML library, so any
title round-trips), and every reader through `parse_mapping`, which refuses YAML aliases that expand
beyond a small limit (a 417-byte "billion laughs" once became a 312-million-character field).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from hippo_core.vault.governance import DOC_TYPES, STATUSES, TRUSTS, DocType, Status, Trust
from hippo_core.vault.vault_layout import SOURCES, WIKI

FENCE = "---"
# Aliases may add at most this many nodes (mappings, sequences, scalars) and scalar characters beyond
# what the raw YAML holds: far above any real use of `&anchor` / `*alias`, far below a bomb.
ALIAS_EXPANSION_LIMIT = 10_000
# A value holding a line break is written double-quoted with escapes, on one line: raw in a
# single-quoted scalar \x85 and \u2028 would not come back as written, and a line reading `---`
# inside a multi-line value would close the frontmatter early.
_YAML_BREAKS = ("\n", "\r", "\x85", "\u2028", "\u2029")
_NO_WRAP = 1_000_000_000


class FrontmatterError(ValueError):
    """The document's frontmatter cannot be read; the message says why, for a human."""


class Frontmatter(BaseModel):
    """The governed fields of a document. Unknown keys are kept (Obsidian users add their own)."""

    model_config = ConfigDict(extra="allow")

    type: DocType | None = None
    status: Status = "reference"
    trust: Trust = "human_edit"
    title: str | None = None
    created: str | None = None
    updated: str | None = None
    tags: list[str] = Field(default_factory=list)
    sources: list[str] = Field(default_factory=list)
    aliases: list[str] = Field(default_factory=list)
    sector: str | None = None
    confidence: float | None = None
    contested: bool = False

    @field_validator("created", "updated", mode="before")
    @classmethod
    def _iso_date(cls, v: Any) -> Any:
        if isinstance(v, dt.datetime | dt.date):
            return v.isoformat()
        return v

    @field_validator("tags", "sources", "aliases", mode="before")
    @classmethod
    def _listify(cls, v: Any) -> Any:
        if v is None:
            return []
        if isinstance(v, str):
            return [v]
        if isinstance(v, list):
            return [str(x) for x in v if x is not None]
        return v

    @field_validator("title", "sector", mode="before")
    @classmethod
    def _stringify(cls, v: Any) -> Any:
        return None if v is None else str(v)

    @model_validator(mode="after")
    def _verified_names_who(self) -> Frontmatter:
        if self.status == "verified" and not str((self.model_extra or {}).get("verified_by") or "").strip():
            raise ValueError("status verified requires verified_by (who checked it against its sources)")
        return self


def defaults_for_path(path: str) -> dict[str, str]:
    """Defaults for a document that has no frontmatter, by where it lives."""
    if path.startswith(SOURCES + "/"):
        return {"status": "raw-source", "trust": "source"}
    if path.startswith(WIKI + "/"):
        return {"status": "draft", "trust": "human_edit"}
    return {"status": "reference", "trust": "human_edit"}


def split(text: str) -> tuple[str | None, str]:
    """Split a document into (raw YAML or None, body). Only a leading `---` line opens frontmatter."""
    if not text.startswith(FENCE):
        return None, text
    first_nl = text.find("\n")
    if first_nl == -1 or text[:first_nl].strip() != FENCE:
        return None, text
    pos = first_nl + 1
    while True:
        nl = text.find("\n", pos)
        line = text[pos:] if nl == -1 else text[pos:nl]
        if line.strip() in (FENCE, "..."):
            body = "" if nl == -1 else text[nl + 1 :]
            return text[first_nl + 1 : pos], body
        if nl == -1:
            raise FrontmatterError("frontmatter opened with '---' but never closed")
        pos = nl + 1


def _expanded_size(root: yaml.Node) -> int:
    """Nodes plus scalar characters of the document as constructed, counting every alias in full.

    Iterative with memoisation (linear in the node graph); a node that contains itself is infinite.
    """
    sizes: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    open_nodes: set[int] = set()
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            open_nodes.discard(key)
            if isinstance(node, yaml.ScalarNode):
                size = 1 + len(node.value)
            elif isinstance(node, yaml.SequenceNode):
                size = 1 + sum(sizes[id(c)] for c in node.value)
            else:
                size = 1 + sum(sizes[id(k)] + sizes[id(v)] for k, v in node.value)
            sizes[key] = size
            if size > 100 * ALIAS_EXPANSION_LIMIT:
                return size
            continue
        if key in sizes:
            continue
        if key in open_nodes:
            return -1  # recursive structure
        open_nodes.add(key)
        stack.append((node, True))
        if isinstance(node, yaml.SequenceNode):
            stack.extend((c, False) for c in node.value if id(c) not in sizes)
        elif isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                stack.extend((c, False) for c in (k, v) if id(c) not in sizes)
    return sizes[id(root)]


def _safe_load(raw: str) -> Any:
    """`yaml.safe_load`, refusing aliases that expand far beyond the text (FrontmatterError)."""
    loader = yaml.SafeLoader(raw)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if "*" in raw:  # only an alias can make the document larger than its text
            size = _expanded_size(node)
            if size < 0 or size > len(raw) + ALIAS_EXPANSION_LIMIT:
                what = "refer to themselves" if size < 0 else f"expand to over {size:,} nodes and characters"
                raise FrontmatterError(
                    f"frontmatter YAML aliases {what} (limit: {ALIAS_EXPANSION_LIMIT:,} beyond the text); "
                    "write the values out instead of using &anchors and *aliases"
                )
        return loader.construct_document(node)
    finally:
        loader.dispose()


def parse_mapping(raw: str | None) -> dict[str, Any]:
    """Parse raw YAML frontmatter into a mapping, with a clear error for anything else."""
    if raw is None or not raw.strip():
        return {}
    try:
        data = _safe_load(raw)
    except RecursionError:
        raise FrontmatterError("frontmatter YAML is nested too deeply") from None
    except FrontmatterError:
        raise
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise FrontmatterError(f"invalid YAML in frontmatter{where}: {problem}") from None
    except ValueError as exc:  # e.g. an impossible date such as 2024-02-30
        raise FrontmatterError(f"invalid value in frontmatter: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FrontmatterError(f"frontmatter must be a mapping of keys, got {type(data).__name__}")
    return {str(k): v for k, v in data.items()}


def validate(data: dict[str, Any], path: str = "") -> Frontmatter:
    """Check fields against the contract. Blank properties (Obsidian writes `status:`) take the defaults."""
    try:
        return Frontmatter.model_validate({**defaults_for_path(path), **_present(data)})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}"
            if err["loc"]
            else err["msg"].removeprefix("Value error, ")
            for err in exc.errors(include_url=False)
        )
        raise FrontmatterError(f"frontmatter breaks the contract: {problems}") from None


def parse(text: str, path: str = "") -> tuple[Frontmatter, str]:
    """Parse and validate a document's frontmatter. Returns (frontmatter, body)."""
    raw, body = split(text)
    return validate(parse_mapping(raw), path), body


class _Dumper(yaml.SafeDumper):
    """Safe YAML that writes a value holding a non-`\\n` line break double-quoted, so it round-trips."""

    def choose_scalar_style(self) -> str:
        event = self.event
        if isinstance(event, yaml.ScalarEvent) and any(b in event.value for b in _YAML_BREAKS):
            return '"'
        return super().choose_scalar_style()


def dump(fields: dict[str, Any]) -> str:
    """The YAML text of a mapping as frontmatter holds it (keys in the given order, Unicode kept)."""
    return yaml.dump(
        fields, Dumper=_Dumper, allow_unicode=True, sort_keys=False, default_flow_style=False, width=_NO_WRAP
    )


# Governed fields whose value a person's note may hold outside the vocabulary (`status: done`,
# `type: meeting`, `confidence: high`): kept as written, rank neutral, reported once per value.
_VOCABULARY: dict[str, tuple[str, ...]] = {"type": DOC_TYPES, "status": STATUSES, "trust": TRUSTS}


def foreign_values(data: dict[str, Any]) -> dict[str, str]:
    """Governed fields whose value is outside the contract, as written (field → value)."""
    out: dict[str, str] = {}
    for key, allowed in _VOCABULARY.items():
        value = data.get(key)
        if value is not None and value not in allowed:
            out[key] = str(value)
    conf = data.get("confidence")
    if conf is not None and (isinstance(conf, bool) or not isinstance(conf, int | float)):
        out["confidence"] = str(conf)
    return out


class Note(BaseModel):
    """A person's note read leniently: the contract's fields, and what did not fit it."""

    fm: Frontmatter
    body: str
    foreign: dict[str, str] = Field(default_factory=dict)  # field → value as written, outside the contract
    problem: str | None = None  # why the frontmatter block was not read (the note is indexed anyway)


def parse_note(text: str, path: str = "") -> Note:
    """Read a note for indexing: never refuses a readable note.

    Values outside the vocabulary are set aside (`foreign`) and the contract's defaults used for
    validation; a field that still breaks the contract is set aside too. Frontmatter that is not YAML
    at all (or an alias bomb) is ignored with the reason in `problem`, and the body after it indexed.
    """
    try:
        raw, body = split(text)
    except FrontmatterError as exc:
        return Note(fm=validate({}, path), body=text, problem=str(exc))
    try:
        data = parse_mapping(raw)
    except FrontmatterError as exc:
        return Note(fm=validate({}, path), body=body, problem=str(exc))
    foreign = foreign_values(data)
    kept = {k: v for k, v in data.items() if k not in foreign}
    for _ in range(len(kept) + 1):
        try:
            fm = Frontmatter.model_validate({**defaults_for_path(path), **_present(kept)})
            return Note(fm=fm, body=body, foreign=foreign)
        except ValidationError as exc:
            bad = {str(e["loc"][0]) for e in exc.errors() if e["loc"]}
            if "status" in kept and kept.get("status") == "verified" and not bad:
                bad = {"status"}  # `verified` without `verified_by`: kept as written, not as verified
            bad &= set(kept)
            if not bad:
                break
            for key in sorted(bad):
                foreign[key] = str(kept.pop(key))
    return Note(fm=validate({}, path), body=body, foreign=foreign)


def _present(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if v is not None}


def render(fields: dict[str, Any], body: str) -> str:
    """Write a document: YAML frontmatter (keys in the given order) then the body.

    The one frontmatter writer of the project: titles with `\\`, quotes, control characters or line
    breaks come back exactly as given (`parse_mapping(split(render(f, b))[0]) == f`).
    """
    dumped = dump(fields)
    if not body.startswith("\n"):
        body = "\n" + body
    return f"{FENCE}\n{dumped}{FENCE}\n{body}"
