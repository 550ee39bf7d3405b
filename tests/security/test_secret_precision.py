"""Measured precision and recall of the secret scanner (issue 14, point 7).

Clean side: code-heavy notes in tests/fixtures/secrets/clean (variable names, hashes, UUIDs, base64
images, Korean prose, URLs, placeholders) and every note of both sample vaults give zero findings.
Secret side: generated real-shaped fakes of every kind the scanner knows are all found, with their
kind, and none survives `scrub`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hippo_core.safety.scanners import SECRET_KINDS, find_secrets
from hippo_core.safety.scrub import scrub
from tests.security.secret_shapes import examples

ROOT = Path(__file__).resolve().parents[2]
CLEAN_NOTES = sorted(
    [
        *(ROOT / "tests/fixtures/secrets/clean").glob("*.md"),
        *(ROOT / "examples/vault").rglob("*.md"),
        *(ROOT / "tests/fixtures/vault").rglob("*.md"),
        *(ROOT / "tests/fixtures/inbox").rglob("*.md"),
    ]
)
SECRETS = examples(seed=14, per_shape=3)


def false_positives() -> list[str]:
    found = []
    for path in CLEAN_NOTES:
        text = path.read_text(encoding="utf-8")
        found += [f"{path.relative_to(ROOT)}: {f.kind} {f.excerpt}" for f in find_secrets(text)]
    return found


def missed() -> list[str]:
    out = []
    for kind, text, secret in SECRETS:
        start = text.index(secret)
        covering = [f for f in find_secrets(text) if f.start <= start and start + len(secret) <= f.end]
        if not covering or covering[0].kind != kind or secret in scrub(text).text:
            out.append(f"{kind}: {text[:60]!r} → {[(f.kind, f.start, f.end) for f in find_secrets(text)]}")
    return out


def test_the_clean_corpus_is_big_enough_to_mean_something() -> None:
    assert len(CLEAN_NOTES) >= 40
    assert len(list((ROOT / "tests/fixtures/secrets/clean").glob("*.md"))) >= 9


def test_zero_false_positives_on_code_heavy_notes_and_the_sample_vaults() -> None:
    fps = false_positives()
    print(f"\nprecision corpus: {len(fps)} false positives in {len(CLEAN_NOTES)} clean notes")
    assert fps == []


def test_every_generated_secret_is_caught_with_its_kind() -> None:
    misses = missed()
    print(f"\nsecret corpus: {len(SECRETS) - len(misses)} of {len(SECRETS)} caught")
    assert misses == []


def test_every_kind_has_generated_examples() -> None:
    assert {kind for kind, _, _ in SECRETS} == set(SECRET_KINDS)


@pytest.mark.parametrize(
    "line",
    [
        'tokens = kiwi.tokenize("커피를 마시지 않는다")',
        'secret_key = os.environ["SECRET_KEY"]',
        "password_hash = bcrypt(pw)",
        "const apiKey = process.env.API_KEY",
        "api_key = settings.api_key",
        "TOKEN_LIMIT = 4096",
        "password=<your-password>",
        "DB_PASSWORD=${DB_PASSWORD}",
        "password: ****",
        "HIPPO_MCP_TOKEN=change-me",
        "api_key: SecretStr | None = None",
        "3f786850e387550fdab836ed7e6dc881de23001b",
        "550e8400-e29b-41d4-a716-446655440000",
        "The password is stored as an argon2id hash.",
        "비밀번호는 bcrypt로 해시해서 저장한다.",
        "postgresql://app@db.internal:5432/prod",
    ],
)
def test_the_newcomer_false_positives_stay_clean(line: str) -> None:
    assert find_secrets(line) == [] and scrub(line).text == line
