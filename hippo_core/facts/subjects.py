"""Subjects and predicates: names resolved to one key each.

A subject is resolved through the vault's aliases: a note titled "Caffeine cutoff" with `aliases:
[카페인 컷오프]` makes both names one subject (its title's key). A predicate is resolved through a small
table of known predicates, each with its cardinality and the names it goes by in English and Korean;
a predicate not in the table keeps its own name and an `unknown` cardinality unless the statement says.
"""

from __future__ import annotations

from collections.abc import Iterable

from hippo_core.facts.model import Cardinality, norm_text, subject_key

# predicate -> (cardinality, other names). Single-valued: one value holds at a time; multi-valued: values add.
PREDICATES: dict[str, tuple[Cardinality, tuple[str, ...]]] = {
    "lives_in": ("single", ("lives in", "residence", "home city", "거주지", "사는 곳", "사는곳")),
    "caffeine_cutoff": ("single", ("caffeine cutoff", "카페인 컷오프", "카페인 마감")),
    # Jobs can be held at once (a second job, an adjunct post): a new employer is put to the LLM or a person.
    "works_at": ("unknown", ("employer", "works at", "직장", "근무처", "회사")),
    "uses_library": ("single", ("library", "라이브러리", "uses")),
    "version": ("single", ("버전",)),
    "count": ("single", ("number of", "개수", "수")),
    "deadline": ("single", ("due", "마감일", "기한")),
    "status": ("single", ("상태",)),
    "owner": ("single", ("담당자", "owned by")),
    "lecture_count": ("single", ("lectures", "강의 수", "강 수")),
    "section_count": ("single", ("sections", "섹션 수")),
    "bedtime": ("single", ("취침 시간", "잠드는 시간")),
    "likes": ("multi", ("좋아함", "좋아하는 것", "enjoys")),
    "role": ("multi", ("roles", "역할", "직책", "맡은 일")),
    "speaks": ("multi", ("language", "언어", "구사 언어")),
    "member_of": ("multi", ("소속", "member of")),
    "uses_tool": ("multi", ("tool", "도구", "tools")),
    "allergic_to": ("multi", ("알레르기", "allergy")),
}

_PREDICATE_NAMES: dict[str, str] = {}
for _name, (_card, _others) in PREDICATES.items():
    for _alias in (_name, _name.replace("_", " "), *_others):
        _PREDICATE_NAMES[norm_text(_alias)] = _name


def resolve_predicate(name: str, stated: Cardinality | None = None) -> tuple[str, Cardinality]:
    """(predicate, cardinality): a known predicate's name and cardinality, else the name as written
    (spaces as `_`) and the cardinality the statement gives, or `unknown`."""
    key = norm_text(name)
    known = _PREDICATE_NAMES.get(key) or _PREDICATE_NAMES.get(key.replace("_", " "))
    if known:
        return known, PREDICATES[known][0]
    return key.replace(" ", "_"), stated or "unknown"


class SubjectIndex:
    """Names -> subject key, from (title, aliases) of the vault's notes. Built once per run."""

    def __init__(self, names: Iterable[tuple[str, Iterable[str]]] = ()) -> None:
        self._keys: dict[str, str] = {}
        for title, aliases in names:
            canonical = subject_key(title)
            if not canonical:
                continue
            for name in (title, *aliases):
                k = subject_key(name)
                if k:
                    self._keys.setdefault(k, canonical)

    def key_of(self, name: str) -> str:
        """The subject key of a name: its note's title key when a note names it, else the name's own key."""
        k = subject_key(name)
        return self._keys.get(k, k)

    def pairs(self) -> list[tuple[str, str]]:
        """(name key, subject key) for every name that is not its subject's own key."""
        return sorted((k, v) for k, v in self._keys.items() if k != v)

    def names_of(self, key: str) -> list[str]:
        """Every name (lower-cased) that resolves to this subject."""
        return sorted({k for k, v in self._keys.items() if v == key} | {key})
