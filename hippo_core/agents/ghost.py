"""The ghost layer, pure: memory files, the person's allowlist, promotion rules and ranking (seed S1).

A *ghost* is a lesson an agent wrote in one project that agents in other projects may read. An agent
writes a memory file under `50-ops/<project>/memory/`; it reaches the shared store only with **both**
signals — `scope: shared` in its frontmatter **and** a ticked line in `90-system/ghost-allowlist.md`
whose fingerprint matches the memory's current content — and after the content scanner (the "third
wall"). One signal alone promotes nothing ("한쪽만으로는 아무 일도 일어나지 않는", S1 "dual-signal").
The allowlist lines have the approvals' shape and parser (`hippo_core.wiki.approvals`).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import Literal

from pydantic import BaseModel, Field

from hippo_core.agents.work_memory import Compact, Refused, validate_project, verbose_only
from hippo_core.safety.scanners import find_injections, find_secrets
from hippo_core.vault.fingerprints import sha256_text
from hippo_core.vault.frontmatter import FrontmatterError, parse_mapping, split
from hippo_core.vault.frontmatter import render as render_frontmatter
from hippo_core.vault.sources import slugify
from hippo_core.vault.vault_layout import OPS, SYSTEM
from hippo_core.wiki import approvals

Scope = Literal["project", "shared"]
SCOPES: tuple[str, ...] = Scope.__args__  # type: ignore[attr-defined]
MEMORY_FOLDER = "memory"
ALLOWLIST = f"{SYSTEM}/ghost-allowlist.md"
NAME_MAX_CHARS = 200

# Ranking constants. Seed S4-T §4 ("Access Reinforcement"): "FG recall 시 실시간으로 record_access하여
# effective half-life를 최대 10x 연장하고 30일에 걸쳐 자체 감쇠" — a read extends the effective half-life
# up to 10×, and the extension decays by itself over 30 days. The seed gives no closed form; the one
# used here is in `read_multiplier`.
READ_MULTIPLIER_MAX = 10.0
READ_FADE_DAYS = 30.0
# Feedback weights from the S1 reference implementation (hrmtz/hippocampus, migration 020:
# activation × 0.2, correction × 0.4); the clamp is ours. Not fitted: there is no ghost eval set yet.
USEFUL_WEIGHT = 0.2
NOT_USEFUL_WEIGHT = 0.4
ACTIVATION_MIN, ACTIVATION_MAX = 0.1, 5.0
DEFAULT_HALF_LIFE_DAYS = 90.0


class GhostMemory(BaseModel):
    path: str = Field(description="Vault path of the memory file.")
    name: str
    scope: Scope
    project: str
    created: str | None = None
    body: str

    @property
    def memory_id(self) -> str:
        """`<project>/<file stem>`: stable while the file keeps its place."""
        return f"{self.project}/{PurePosixPath(self.path).stem}"

    @property
    def fingerprint(self) -> str:
        return memory_fingerprint(self.name, self.project, self.body)


def memory_fingerprint(name: str, project: str, body: str) -> str:
    """12 hex of the content a person approves: name, project and body (whitespace at the ends ignored)."""
    return sha256_text(f"{name.strip()}\x00{project}\x00{body.strip()}")[:12]


def memory_folder(project: str) -> str:
    return f"{OPS}/{validate_project(project)}/{MEMORY_FOLDER}"


def memory_path(project: str, name: str) -> str:
    return f"{memory_folder(project)}/{slugify(name, 60)}.md"


def is_memory_path(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return len(parts) == 4 and parts[0] == OPS and parts[2] == MEMORY_FOLDER and path.endswith(".md")


def render_memory(name: str, body: str, project: str, scope: Scope, created: str) -> str:
    fields = {
        "name": name,
        "scope": scope,
        "project": project,
        "created": created,
        "type": "concept",
        "status": "draft",
        "trust": "llm_context",
        "tags": ["ghost-memory"],
    }
    return render_frontmatter(fields, f"\n{body.strip()}\n")


def parse_memory(path: str, text: str) -> GhostMemory:
    """Read a memory file; a missing or wrong field raises `FrontmatterError` with the reason."""
    raw, body = split(text)
    data = parse_mapping(raw)
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise FrontmatterError("memory has no `name`")
    scope = data.get("scope", "project")
    if scope not in SCOPES:
        raise FrontmatterError(f"memory scope {scope!r} is not one of {', '.join(SCOPES)}")
    folder_project = PurePosixPath(path).parts[1] if is_memory_path(path) else None
    project = str(data.get("project") or folder_project or "")
    try:
        validate_project(project)
    except Refused as exc:
        raise FrontmatterError(f"memory project: {exc.reason}") from None
    if folder_project and project != folder_project:
        raise FrontmatterError(f"memory says project {project!r} but lives in 50-ops/{folder_project}/")
    created = data.get("created")
    return GhostMemory(
        path=path,
        name=name.strip(),
        scope=scope,
        project=project,
        created=created.isoformat() if isinstance(created, dt.date) else (str(created) if created else None),
        body=body.strip(),
    )


# --- the allowlist (90-system/ghost-allowlist.md) ----------------------------------------------------
def new_allowlist() -> str:
    return (
        "---\ntype: map\nstatus: reference\ntrust: human_edit\ntitle: Ghost allowlist\n---\n\n"
        "# Ghost allowlist\n\n"
        "Tick a box to share that memory with every project's agents. A memory is shared only when its file\n"
        "says `scope: shared` **and** its line here is ticked. If the memory changes after you ticked it, the\n"
        "fingerprint no longer matches: the change is not shared until you tick the new line.\n\n"
    )


def allowlist_lines(text: str) -> list[approvals.ApprovalLine]:
    return approvals.parse(ALLOWLIST, text)


def propose_lines(text: str, memories: Iterable[GhostMemory]) -> tuple[str, list[str]]:
    """Append an unticked line for each `scope: shared` memory that has no line with its current
    fingerprint. Only appends: the person's ticks and every other line stay as they are."""
    listed = {(line.card, line.fingerprint) for line in allowlist_lines(text)}
    added: list[str] = []
    out = text if text.endswith("\n") or not text else text + "\n"
    for m in memories:
        if m.scope != "shared" or (m.path, m.fingerprint) in listed:
            continue
        out += approvals.render_line(m.path, f"{m.project}: {m.name}", m.fingerprint) + "\n"
        listed.add((m.path, m.fingerprint))
        added.append(m.path)
    return out, added


class Decision(Compact):
    memory_id: str
    path: str
    promote: bool
    reason: str
    fingerprint: str | None = verbose_only()


def scan_memory(memory: GhostMemory) -> str | None:
    """The third wall: why the content may not be shared, or None."""
    text = f"{memory.name}\n{memory.body}"
    secrets = sorted({f.kind for f in find_secrets(text)})
    if secrets:
        return f"content scanner: credential-shaped string ({', '.join(secrets)})"
    injections = sorted({f.kind for f in find_injections(text)})
    if injections:
        return f"content scanner: stored prompt injection ({', '.join(injections)})"
    return None


def decide(memory: GhostMemory, lines: list[approvals.ApprovalLine]) -> Decision:
    """Default-deny: both signals, the current fingerprint, and a clean scan; otherwise the reason."""
    mine = [line for line in lines if line.card == memory.path]
    ticked = [line for line in mine if line.ticked]

    def no(reason: str) -> Decision:
        return Decision(
            memory_id=memory.memory_id,
            path=memory.path,
            promote=False,
            reason=reason,
            fingerprint=memory.fingerprint,
        )

    if memory.scope != "shared":
        extra = " (it has a ticked allowlist line, but the file itself is not shared)" if ticked else ""
        return no(f"scope is 'project': only `scope: shared` memories are promoted{extra}")
    if not mine:
        return no(f"no line in {ALLOWLIST}: a person must list and tick it")
    if not ticked:
        return no(f"its line in {ALLOWLIST} is not ticked: a person has not approved it")
    if not any(line.fingerprint == memory.fingerprint for line in ticked):
        approved = ", ".join(sorted({line.fingerprint for line in ticked}))
        return no(
            f"edited after approval: its content is fp:{memory.fingerprint}, the ticked line approved "
            f"fp:{approved}; tick the new line to share the new text"
        )
    scanned = scan_memory(memory)
    if scanned:
        return no(scanned)
    return Decision(
        memory_id=memory.memory_id,
        path=memory.path,
        promote=True,
        reason="scope: shared and a ticked allowlist line with the current fingerprint; scanner clean",
        fingerprint=memory.fingerprint,
    )


# --- ranking: similarity × recency × activation -----------------------------------------------------
def read_multiplier(
    read_ages_days: Iterable[float], cap: float = READ_MULTIPLIER_MAX, fade_days: float = READ_FADE_DAYS
) -> float:
    """How much reads stretch a memory's half-life (S4-T §4 Access Reinforcement: up to 10×, fading
    over 30 days): `min(cap, 1 + Σ max(0, 1 − age/fade_days))` over the memory's reads.

    Each read adds up to +1× while fresh and its share fades linearly to nothing after `fade_days`;
    nine fresh reads reach the 10× cap, and with no reads for 30 days the multiplier is back to 1.
    """
    extra = sum(max(0.0, 1.0 - max(0.0, age) / fade_days) for age in read_ages_days)
    return min(cap, 1.0 + extra)


def recency(
    age_days: float, half_life_days: float = DEFAULT_HALF_LIFE_DAYS, multiplier: float = 1.0
) -> float:
    """`0.5 ** (age / (half_life × multiplier))`: the read multiplier stretches the effective half-life."""
    return 0.5 ** (max(0.0, age_days) / (half_life_days * max(1.0, multiplier)))


def activation(useful: int, not_useful: int) -> float:
    """Rises with useful feedback, sinks with not-useful: `clamp(1 + 0.2·useful − 0.4·not_useful, 0.1, 5)`."""
    value = 1.0 + USEFUL_WEIGHT * useful - NOT_USEFUL_WEIGHT * not_useful
    return min(ACTIVATION_MAX, max(ACTIVATION_MIN, value))


def ghost_score(similarity: float, recency_factor: float, activation_factor: float) -> float:
    """similarity × recency × activation; a negative or NaN similarity counts as 0."""
    sim = similarity if similarity == similarity and similarity > 0 else 0.0  # NaN check without math
    return sim * recency_factor * activation_factor


_WORD = re.compile(r"\w+", re.UNICODE)


def overlap_similarity(query: str, text: str) -> float:
    """Share of the query's words found in `text`: the fallback when no embedder is configured."""
    q = set(_WORD.findall(query.lower()))
    if not q:
        return 1.0
    t = set(_WORD.findall(text.lower()))
    return len(q & t) / len(q)


def days_between(earlier: str, later: dt.datetime) -> float:
    try:
        then = dt.datetime.fromisoformat(earlier)
    except ValueError:
        return 0.0
    if then.tzinfo is None:
        then = then.replace(tzinfo=dt.UTC)
    return max(0.0, (later - then).total_seconds() / 86400.0)
