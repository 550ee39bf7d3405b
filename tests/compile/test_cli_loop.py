"""`hippo run --job`, `hippo review` and `hippo approve` as a user runs them, on a persistent instance."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hippo_cli.main import main
from tests.conftest import make_vault

BAD_CARD = """---
type: concept
status: draft
trust: llm_summary
title: Hand-made card
sources: [10-sources/kiwi-notes.md]
---

# Hand-made card

Links to [[kiwi-notes]] but has no citations and no promotion meta.
"""


@pytest.fixture
def env(tmp_path: Path, embed_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    vault = make_vault(tmp_path, with_inbox=False)
    monkeypatch.setenv("HIPPO_VAULT", str(vault))
    monkeypatch.setenv("HIPPO_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HIPPO_EMBED_CACHE", str(embed_cache))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("HIPPO_AUTO_APPROVE", raising=False)
    monkeypatch.delenv("HIPPO_DRY_RUN", raising=False)
    return vault


def test_compile_review_approve_promote_from_the_cli(env: Path, capsys: pytest.CaptureFixture) -> None:
    (env / "30-reviews" / "staging" / "hand-made.md").write_text(BAD_CARD, encoding="utf-8")
    assert main(["run", "--job", "nightly_compile"]) == 0  # a schedule's name runs its job now
    err = capsys.readouterr().err
    assert "staging_cards[kiwi-notes] cards=1 compiler=offline-extractive/1 llm_calls=0" in err
    assert main(["run", "--job", "compile_job"]) == 0
    assert "nothing to compile" in capsys.readouterr().err

    assert main(["review"]) == 0
    out = capsys.readouterr().out
    assert "[ ] 30-reviews/staging/kiwi-형태소-분석기-메모.md" in out
    assert "gate promotion_meta: no `## Promotion meta` section" in out
    assert "gate citation_anchor" in out and "judge (offline-judge/1): reject" in out
    assert main(["review", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [w["card"] for w in data["waiting"]] == ["30-reviews/staging/kiwi-형태소-분석기-메모.md"]

    assert main(["approve", "no-such-card"]) == 2
    assert "no open approval" in capsys.readouterr().err
    assert main(["approve", "Kiwi 형태소 분석기 메모"]) == 0  # by title; a path or file name works too
    [approval] = (env / "30-reviews" / "approvals").glob("*.md")
    assert "- [x] [[30-reviews/staging/kiwi-형태소-분석기-메모|" in approval.read_text(encoding="utf-8")
    assert main(["approve", "kiwi-형태소-분석기-메모"]) == 2  # already ticked

    assert main(["run", "--job", "approval_rounds"]) == 0
    assert "canonical_wiki promoted=1" in capsys.readouterr().err
    assert (env / "20-wiki" / "general" / "kiwi-형태소-분석기-메모.md").exists()
    assert main(["run", "--job", "janitor_job"]) == 0
    assert main(["run", "--job", "nope"]) == 2
    assert "no job or schedule 'nope'" in capsys.readouterr().err
