"""The skill lane: agent skills (SKILL.md) as their own small corpus, searched only by `hippo_suggest`.

A skill is one `SKILL.md` (YAML frontmatter with `name` and `description`, then instructions) with the
documents of its folder (`references/…`, cards) collapsed onto it: they add words to find it by, never
candidates of their own. Parsing and scoring are pure; `hippo_work.suggest` reads the folders.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel, Field

SKILL_FILE = "SKILL.md"
MAX_SKILL_BYTES = 256 * 1024  # a SKILL.md larger than this is reported, not read
MAX_REFERENCE_CHARS = 20_000  # words taken from each skill's collapsed references
MAX_CANDIDATES = 3
MAX_SUGGEST_BYTES = 600

_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_KEY = re.compile(r"^([A-Za-z_][\w-]*)[ \t]*:[ \t]*(.*)$")
_WORD = re.compile(r"[^\W_]+")
_HANGUL = re.compile(r"[가-힣]")
_REDACTED = re.compile(r"\[REDACTED:[^\]\s]{0,40}\]")
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "do",
        "for",
        "from",
        "how",
        "i",
        "in",
        "is",
        "it",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "please",
        "that",
        "the",
        "this",
        "to",
        "use",
        "used",
        "uses",
        "using",
        "we",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
    ]
)


class SkillProblem(ValueError):
    """A SKILL.md that cannot be used: reported with its path, never fatal for the others."""


class Skill(BaseModel):
    name: str
    description: str
    path: str = Field(description="Where its SKILL.md is (shown to the agent).")
    body: str = ""
    references: str = ""


def parse_skill(text: str, path: str) -> Skill:
    """A SKILL.md's frontmatter `name` and `description` (plain scalars, quoted or folded `>`/`|`)."""
    m = _FRONT.match(text)
    if not m:
        raise SkillProblem(f"{path}: no YAML frontmatter (--- name/description ---)")
    fields: dict[str, str] = {}
    current: str | None = None
    for line in m.group(1).splitlines():
        km = _KEY.match(line)
        if km and not line[:1].isspace():
            current = km.group(1).lower()
            value = km.group(2).strip()
            fields[current] = "" if value in (">", "|", ">-", "|-") else value.strip("'\"")
        elif current and line.strip():
            fields[current] = (fields[current] + " " + line.strip()).strip()
    name, description = fields.get("name", "").strip(), fields.get("description", "").strip()
    if not name or not description:
        raise SkillProblem(f"{path}: frontmatter lacks `name` or `description`")
    return Skill(name=name[:120], description=description[:1024], path=path, body=text[m.end() :])


def terms(text: str) -> list[str]:
    """Lower-cased words without stop words; Hangul words also as character bigrams (no morphology at
    hook time: the skill lane must stay light)."""
    out = []
    text = _REDACTED.sub(" ", text)  # a scrubbed secret's marker is no word of the request
    for w in _WORD.findall(text.lower()):
        if w in _STOP or (len(w) < 2 and not _HANGUL.match(w)):
            continue
        out.append(w)
        if _HANGUL.match(w) and len(w) > 2:
            out.extend(w[i : i + 2] for i in range(len(w) - 1))
    return out


class SkillHit(BaseModel):
    name: str
    path: str
    description: str
    score: float


def skill_text(skill: Skill) -> tuple[list[str], list[str]]:
    """(the heavily weighted words: name and description, the rest: body and references)."""
    head = terms(skill.name.replace("-", " ") + " " + skill.description)
    rest = terms(skill.body[:MAX_REFERENCE_CHARS] + " " + skill.references[:MAX_REFERENCE_CHARS])
    return head, rest


def lexical_scores(query: str, skills: Sequence[Skill]) -> list[float]:
    """BM25-like: each query term's idf over the skills, counted in the name/description (full weight) and
    the body with its references (saturated, at most 0.6 of a name/description match); normalised by the query's own weight."""
    q = list(dict.fromkeys(terms(query)))
    if not q or not skills:
        return [0.0] * len(skills)
    docs = [skill_text(s) for s in skills]
    n = len(docs)
    df = Counter(t for head, rest in docs for t in set(head) | set(rest))
    # idf clamped to [0.5, 1]: with a handful of skills an unmatched word must not outweigh the matched ones
    idf = {t: min(max(math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)), 0.5), 1.0) for t in q}
    best = sum(idf.values()) or 1.0
    scores = []
    for head, rest in docs:
        h, r = Counter(head), Counter(rest)
        s = sum(idf[t] * max(min(h[t], 1) * 1.0, min(r[t], 3) / (min(r[t], 3) + 0.5) * 0.6) for t in q)
        scores.append(s / best)
    return scores


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    num = sum(x * y for x, y in zip(a, b, strict=False))
    den = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return num / den if den else 0.0


class SuggestParams(BaseModel, frozen=True):
    min_lexical: float = Field(default=0.3, ge=0, le=1)
    similarity_low: float = Field(default=0.82, ge=-1, le=1)
    similarity_high: float = Field(default=0.9, ge=-1, le=1)
    min_score: float = Field(default=0.3, ge=0, le=1)


def rank_skills(
    query: str,
    skills: Sequence[Skill],
    similarities: Sequence[float] | None = None,
    params: SuggestParams | None = None,
    limit: int = MAX_CANDIDATES,
    max_bytes: int = MAX_SUGGEST_BYTES,
) -> list[SkillHit]:
    """At most `limit` skills whose score clears the bar, best first, whose shown text fits `max_bytes`."""
    params = params or SuggestParams()
    lex = lexical_scores(query, skills)
    scored = []
    for i, skill in enumerate(skills):
        sem = 0.0
        if similarities is not None:
            span = max(params.similarity_high - params.similarity_low, 1e-6)
            sem = min(max((similarities[i] - params.similarity_low) / span, 0.0), 1.0)
        score = max(lex[i] if lex[i] >= params.min_lexical else 0.0, sem)
        if score >= params.min_score:
            scored.append((score, skill))
    scored.sort(key=lambda p: (-p[0], p[1].name))
    hits: list[SkillHit] = []
    used = 0
    seen: set[str] = set()
    for score, skill in scored:
        if skill.name in seen:
            continue
        description = skill.description if len(skill.description) <= 160 else skill.description[:157] + "…"
        size = len(skill.name.encode()) + len(skill.path.encode()) + len(description.encode()) + 8
        if used + size > max_bytes:
            continue
        seen.add(skill.name)
        used += size
        hits.append(
            SkillHit(name=skill.name, path=skill.path, description=description, score=round(score, 4))
        )
        if len(hits) >= limit:
            break
    return hits
