"""`hippo_suggest(prompt)`: the few agent skills that fit a prompt, from the skill lane only, within a budget.

The skill lane is read from the person's skill folders (Claude Code's `~/.claude/skills/*/SKILL.md`, a
project's `.claude/skills/`, the vault's `40-skills/` projection and any `HIPPO_SKILL_DIRS`), never from
the search index, so a skill never shows up in ordinary search results and a note never shows up here.
Each SKILL.md gets the other Markdown files of its folder (`references/`, cards) collapsed onto it.
A broken SKILL.md is reported in `problems` and the others are still searched. Over budget, or on any
failure, the answer is an empty list with the reason: never a late answer.
"""

from __future__ import annotations

import concurrent.futures
import os
import stat
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from hippo_core.recall.skills import (
    MAX_REFERENCE_CHARS,
    MAX_SKILL_BYTES,
    SKILL_FILE,
    Skill,
    SkillHit,
    SkillProblem,
    SuggestParams,
    cosine,
    parse_skill,
    rank_skills,
)
from hippo_core.safety.scrub import scrub
from hippo_core.vault.vault_layout import SKILLS as VAULT_SKILLS

EMBED_WAIT_S = 0.7  # the query embedding gets this long, then string search goes on alone
MAX_SKILLS = 500
MAX_REFERENCE_FILES = 20

Embed = Callable[[list[str], str], Sequence[Sequence[float]]]  # (texts, "query" | "passage")


class SuggestResult(BaseModel):
    status: Literal["ok", "degraded", "empty"] = "ok"
    reason: str | None = None
    candidates: list[SkillHit] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list, description="SKILL.md files that could not be read.")
    elapsed_ms: int = 0


def skill_folders(
    home: Path | None, vault: Path | None, project_dir: Path | None, extra: Iterable[Path] = ()
) -> list[Path]:
    """Where skills live, most general first: the user's, the vault's projection, the project's, extras."""
    folders = []
    if home is not None:
        folders.append(home / ".claude" / "skills")
    if vault is not None:
        folders.append(vault / VAULT_SKILLS)
    if project_dir is not None:
        folders.append(project_dir / ".claude" / "skills")
    folders.extend(extra)
    return folders


def _read_small(path: Path, limit: int) -> str:
    """A regular file's text, opened without blocking (a FIFO named SKILL.md never hangs us)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SkillProblem(f"{path}: not a regular file")
        if info.st_size > limit:
            raise SkillProblem(f"{path}: larger than {limit} bytes")
        data = os.read(fd, limit + 1)
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise SkillProblem(f"{path}: not UTF-8 text") from None


def _references(folder: Path, skill_file: Path) -> str:
    parts: list[str] = []
    size = 0
    for p in sorted(folder.rglob("*.md"))[: MAX_REFERENCE_FILES + 1]:
        if p == skill_file or p.is_symlink() or not p.is_file():
            continue
        try:
            text = _read_small(p, MAX_SKILL_BYTES)
        except (OSError, SkillProblem):
            continue
        parts.append(text[: MAX_REFERENCE_CHARS - size])
        size += len(parts[-1])
        if size >= MAX_REFERENCE_CHARS:
            break
    return "\n".join(parts)


def load_skills(folders: Sequence[Path]) -> tuple[list[Skill], list[str]]:
    """Every `<folder>/*/SKILL.md` (and `<folder>/SKILL.md`), with its references; problems by path."""
    skills: list[Skill] = []
    problems: list[str] = []
    for root in folders:
        try:
            if not root.is_dir():
                continue
            files = [root / SKILL_FILE] + sorted(
                p / SKILL_FILE for p in root.iterdir() if p.is_dir() and not p.is_symlink()
            )
        except OSError as exc:
            problems.append(scrub(f"{root}: cannot be listed ({exc.strerror or exc})").text)
            continue
        for f in files:
            if len(skills) >= MAX_SKILLS:
                problems.append(f"{root}: more than {MAX_SKILLS} skills; the rest were not read")
                return skills, problems
            try:
                if not (f.exists() or f.is_symlink()):
                    continue
                text = _read_small(f, MAX_SKILL_BYTES)
                skill = parse_skill(text, str(f))
                skill.references = _references(f.parent, f) if f.parent != root else ""
                skills.append(skill)
            except SkillProblem as exc:
                problems.append(scrub(str(exc)).text)
            except OSError as exc:
                problems.append(scrub(f"{f}: cannot be read ({exc.strerror or exc})").text)
    return skills, problems


class SkillLane:
    """The skill lane of one process: skills re-read when their files change, their description
    vectors cached (the librarian keeps one; the hook builds one per prompt, without vectors)."""

    def __init__(
        self, folders: Sequence[Path], embed: Embed | None = None, params: SuggestParams | None = None
    ) -> None:
        self.folders = list(folders)
        self.embed = embed
        self.params = params or SuggestParams()
        self._vectors: dict[tuple[str, str], Sequence[float]] = {}
        self._lock = threading.Lock()
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="skill-embed")

    def _similarities(self, query: str, skills: list[Skill], deadline: float) -> list[float] | None:
        if self.embed is None or not skills:
            return None
        embed = self.embed

        def work() -> list[float]:
            with self._lock:
                missing = [s for s in skills if (s.path, s.description) not in self._vectors]
                if missing:
                    for s, v in zip(
                        missing,
                        embed([f"{s.name}: {s.description}" for s in missing], "passage"),
                        strict=True,
                    ):
                        self._vectors[(s.path, s.description)] = v
                q = embed([query], "query")[0]
                return [cosine(q, self._vectors[(s.path, s.description)]) for s in skills]

        future = self._pool.submit(work)
        try:
            return future.result(timeout=max(0.0, min(EMBED_WAIT_S, deadline - time.monotonic())))
        except Exception:  # noqa: BLE001 - late or failed embedding: string search alone
            return None

    def suggest(
        self, prompt: str, budget_ms: int = 1500, extra_folders: Sequence[Path] = ()
    ) -> SuggestResult:
        started = time.monotonic()
        deadline = started + budget_ms / 1000
        try:
            query = scrub(prompt[:4000]).text
            skills, problems = load_skills([*self.folders, *extra_folders])
            if time.monotonic() > deadline:
                return SuggestResult(
                    status="degraded", reason="over budget reading the skills", problems=problems
                )
            sims = self._similarities(query, skills, deadline)
            hits = rank_skills(query, skills, sims, self.params)
            elapsed = int(1000 * (time.monotonic() - started))
            if time.monotonic() > deadline:
                return SuggestResult(
                    status="degraded", reason="over budget", problems=problems, elapsed_ms=elapsed
                )
            reason = (
                None
                if sims is not None or self.embed is None
                else "string search only (no query embedding in time)"
            )
            return SuggestResult(
                status="ok" if hits else "empty",
                reason=reason,
                candidates=hits,
                problems=problems,
                elapsed_ms=elapsed,
            )
        except Exception as exc:  # noqa: BLE001 - suggestions are optional: an empty list, never an error
            return SuggestResult(status="degraded", reason=scrub(f"{type(exc).__name__}: {exc}").text[:300])
