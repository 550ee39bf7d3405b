"""Credential scrubbing: each planted kind is replaced by a typed placeholder and counted.

Every kind the scanner knows is generated and checked in tests/security/test_secret_precision.py;
PLANTED is the smaller set the conversation-ingest tests plant in a session log.
"""

from __future__ import annotations

import pytest

from hippo_core.safety.scanners import find_secrets
from hippo_core.safety.scrub import KINDS, scrub

# Built at run time, so no credential-shaped string is committed to the repository.
A = "A" * 8
PLANTED: dict[str, str] = {
    "anthropic_key": "sk-ant-api03-" + "Zq9" * 12,
    "openai_key": "sk-proj-" + "Xy7" * 12,
    "aws_access_key": "AKIA" + "QWERTYUIOPASDFGH",
    "aws_secret_key": "aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY",
    "github_token": "ghp_" + "a1B2c3D4e5" * 4,
    "slack_token": "xoxb-" + "1234567890-" + "abcdefghijKLMN",
    "slack_webhook": "https://hooks.slack.com/services/" + "T000/B000/" + "XXXXXXXX",
    "google_api_key": "AIza" + "Sy" + "B" * 33,
    "google_oauth_token": "ya29." + "a0AfH6SM" * 4,
    "jwt": "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0." + "dozjgNryP4J3jVmNHl0w5N",
    "bearer_token": "Authorization: Bearer " + "tok_" + "9f8e7d6c5b4a" * 2,
    "private_key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEow" + A + "\n-----END RSA PRIVATE KEY-----",
    "url_password": "postgresql://app:" + "hunter2pass" + "@db.internal:5432/prod",
    "connection_password": "Server=db;User Id=sa;Password=" + "S3cretPw" + ";",
    "env_secret": "export DEPLOY_SECRET=" + "q8Lm2Zx9" * 3,
}
SECRET_VALUES = {
    "aws_secret_key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "bearer_token": "tok_9f8e7d6c5b4a9f8e7d6c5b4a",
    "private_key": "MIIEow" + A,
    "url_password": "hunter2pass",
    "connection_password": "S3cretPw",
    "env_secret": "q8Lm2Zx9q8Lm2Zx9",
}


def test_planted_kinds_are_known() -> None:
    assert set(PLANTED) <= set(KINDS)


@pytest.mark.parametrize("kind", sorted(PLANTED))
def test_each_kind_is_replaced_by_its_placeholder(kind: str) -> None:
    text = f"제가 설정한 값은 {PLANTED[kind]} 입니다. keep this"
    result = scrub(text)
    assert f"[REDACTED:{kind}]" in result.text
    assert result.counts == {kind: 1}
    assert SECRET_VALUES.get(kind, PLANTED[kind]) not in result.text
    assert result.text.startswith("제가 설정한 값은") and result.text.endswith("keep this")


def test_url_password_keeps_user_and_host() -> None:
    out = scrub("DATABASE_URL used postgres://app:pw-123456@db:5432/x today").text
    assert "app:[REDACTED:url_password]@db:5432/x" in out


def test_counts_add_up_and_scrubbing_is_idempotent() -> None:
    text = "\n".join(PLANTED.values())
    first = scrub(text)
    assert sum(first.counts.values()) == len(PLANTED)
    assert scrub(first.text).counts == {}
    assert find_secrets(first.text) == []
    assert sorted(f.kind for f in find_secrets(text)) == sorted(PLANTED)


def test_ordinary_text_is_untouched() -> None:
    text = (
        "The password reset flow sends a token by email. 토큰 만료 시간은 30분입니다. "
        "Run `pytest -k token` and see https://example.com/docs/auth. POOL_SIZE = 5"
    )
    assert scrub(text).text == text
