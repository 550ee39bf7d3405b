"""Every scanner regex runs in time linear in its input (issue 9, point 1).

Gross bounds only, as the project's standards ask of timed tests: 100 KB of each adversarial shape
the attack run found (and of shapes built from each rule's own prefixes) under one second, and no
super-linear growth on strings built from the rules' alphabets (time at 4n bounded by 10× time at n,
with a floor that machine noise cannot reach). Before this rewrite `env_secret` took 13 s on 3.6 KB
of "TOKEN-", `jwt` 95 s on 80 KB of "eyJ-", `url_password` 2.5 s on 80 KB of "a.".
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hippo_core.safety.scanners import INJECTION_PATTERNS, SECRET_RULES, find_injections, find_secrets
from hippo_core.safety.scrub import scrub

SIZE = 100_000

# The attack run's shapes (rows 400-418) and the injection scanner's own worst cases.
ATTACK_SHAPES = [
    "TOKEN-", "a-", "eyJ-", "a.", "x://u:", "eyJa.eyJa.", "-----BEGIN PRIVATE KEY-----\nA ",
    "-----BEGIN RSA PRIVATE KEY-----", "-----END A ", "bearer ", "sk-", "password=", "ghp_a", "xoxb-",
    "AKIA", "Aa0+", '"token": "', "ignore all ", "i g n o r e ", "\u200b", "ｉ", "이전 지시를 ", "<tool_use>",
    "ﬁ", "e\u0301", "ｉ가",
]  # fmt: skip


def seconds(fn: Callable[[str], object], text: str, tries: int = 3) -> float:
    """The best of up to `tries` runs, stopping at the first under a second: a busy machine can stall
    one run, but an algorithm that is too slow is slow every time."""
    best = float("inf")
    for _ in range(tries):
        start = time.process_time()
        fn(text)
        best = min(best, time.process_time() - start)
        if best < 1.0:
            break
    return best


def repeat(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


@pytest.mark.parametrize("unit", ATTACK_SHAPES)
def test_100kb_of_an_attack_shape_takes_under_a_second(unit: str) -> None:
    text = repeat(unit, SIZE)
    for fn in (scrub, find_secrets, find_injections):
        took = seconds(fn, text)
        assert took < 1.0, f"{fn.__name__} took {took:.2f} s on 100 KB of {unit!r}"


def rule_units(keywords: tuple[str, ...]) -> list[str]:
    """Shapes that make a backtracking regex work hard: its prefix repeated, alone and with the characters
    its body and context accept (word characters, separators, quotes, operators)."""
    units = []
    for k in keywords or ("a",):
        for word in {k, k.upper()}:
            units += [
                word,
                word + "a",
                word + "-",
                word + "_a",
                word + ".",
                word + "=",
                word + ": ",
                word + " a ",
            ]
    return units


@pytest.mark.parametrize("rule", SECRET_RULES, ids=[f"{i}-{r.kind}" for i, r in enumerate(SECRET_RULES)])
def test_each_secret_rule_is_fast_on_its_own_prefixes(rule) -> None:  # noqa: ANN001
    def run(text: str) -> None:
        for m in rule.pattern.finditer(text):
            if rule.accept is not None:
                rule.accept(m)

    for unit in rule_units(rule.keywords):
        took = seconds(run, repeat(unit, SIZE))
        assert took < 1.0, f"{rule.kind} took {took:.2f} s on 100 KB of {unit!r}"


@pytest.mark.parametrize("kind", sorted(INJECTION_PATTERNS))
def test_each_injection_pattern_is_fast_on_its_own_words(kind: str) -> None:
    pattern = INJECTION_PATTERNS[kind]
    for unit in ["ignore ", "ignore all ", "forget all previous ", "disregard you were ", "### system",
                 "<|im_start|", "</tool_use", "you are now ", "reveal ", "이전 ", "이전 지시 ", "시스템 프롬프트 ",
                 "next agent ", "next agent at session start ", "upload ", "send secrets ", "~/.ssh ", "curl a ",
                 "![a](", "![a](//", "do not tell "]:  # fmt: skip
        took = seconds(lambda t: list(pattern.finditer(t)), repeat(unit, SIZE))
        assert took < 1.0, f"{kind} took {took:.2f} s on 100 KB of {unit!r}"


# Building blocks for generated inputs: every rule's prefixes plus the separators their patterns use.
PIECES = sorted(
    {k for rule in SECRET_RULES for k in rule.keywords}
    | {k.upper() for rule in SECRET_RULES for k in rule.keywords}
    | set("aA0-_.=:/+~ \n\"'@")
    | {"://", "-----BEGIN ", "PRIVATE KEY-----", "eyJ", "ignore", "all", "previous"}
)


def grows_linearly(fn: Callable[[str], object], unit: str, n: int = 8_000, floor: float = 0.25) -> bool:
    """time(4n) ≤ 10 × time(n), or under `floor` seconds; a second measurement before failing."""
    for _ in range(2):
        small, large = seconds(fn, repeat(unit, n), tries=1), seconds(fn, repeat(unit, 4 * n), tries=1)
        if large <= max(floor, 10 * small):
            return True
    return False


@settings(
    max_examples=25, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
)
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=5).map("".join))
def test_generated_strings_never_take_super_linear_time(unit: str) -> None:
    assert grows_linearly(find_secrets, unit), f"find_secrets grows super-linearly on {unit!r}"
    assert grows_linearly(find_injections, unit), f"find_injections grows super-linearly on {unit!r}"
