"""Canonical aliases expand lexical matching: an alias, or a mis-transcription registered as one, finds the page."""

from __future__ import annotations

from hippo_search.envelope import SearchRequest
from hippo_search.pipeline import open_engine
from hippo_settings import HippoSettings
from tests.conftest import run_graph

PAGE = """---
type: entity
status: canonical
trust: human_edit
title: 쿠버네티스
aliases: [k8s, Cooper Netties]
sector: data
---

# 쿠버네티스

## 운영

컨테이너 오케스트레이션 플랫폼이다. 노드 풀은 세 개로 나눠 운영한다.
"""


def test_alias_and_registered_mistranscription_find_the_page(settings: HippoSettings) -> None:
    page = settings.vault / "20-wiki" / "data" / "kubernetes.md"
    page.write_text(PAGE, encoding="utf-8")
    assert run_graph(settings).success
    engine = open_engine(settings)
    body = PAGE.split("---", 2)[2].lower()
    for query, path in [
        (
            "cooper netties",
            "20-wiki/data/kubernetes.md",
        ),  # a speech-to-text mis-hearing, registered as an alias
        ("k8s 노드", "20-wiki/data/kubernetes.md"),
        ("sleep hygiene", "20-wiki/health/sleep-hygiene.md"),  # English alias of a Korean page
        ("SDA", "20-wiki/data/dagster-assets.md"),
    ]:
        hits = engine.search(SearchRequest(query=query, limit=3, mode="lexical"), log=False).results
        assert hits and hits[0].path == path, (query, [h.path for h in hits])
        assert "lexical" in hits[0].matched_by
    # only the alias can have matched: the words are nowhere in the page text
    assert "cooper" not in body and "netties" not in body
