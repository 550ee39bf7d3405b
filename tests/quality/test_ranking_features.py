"""Each ranking feature moves a known document (engine over a purpose-built vault)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hippo_cli.vault_init import init_vault
from hippo_core.ranking.ranking import RankingParams
from hippo_search.envelope import SearchRequest
from hippo_search.pipeline import open_engine
from hippo_settings import HippoSettings
from tests.conftest import run_graph

NOTE = "---\ntitle: {title}\nstatus: {status}\nupdated: {updated}\naliases: [{aliases}]\n---\n\n# {title}\n\n{body}\n"
DOCS = {
    "20-wiki/x/a-draft.md": (
        "Zorblax draft",
        "draft",
        "2026-10-01",
        "",
        "## Steps\n\nThe zorblax calibration uses three steps.",
    ),
    "20-wiki/x/b-canon.md": (
        "Zorblax canon",
        "canonical",
        "2026-10-01",
        "",
        "## Steps\n\nThe zorblax calibration uses three steps.",
    ),
    "20-wiki/x/c-old.md": (
        "Quixotic old",
        "canonical",
        "2012-01-01",
        "",
        "## Widget\n\nThe quixotic widget needs oiling.",
    ),
    "20-wiki/x/d-new.md": (
        "Quixotic new",
        "canonical",
        "2026-11-01",
        "",
        "## Widget\n\nThe quixotic widget needs oiling.",
    ),
    "20-wiki/x/e-sections.md": (
        "Pelican notes",
        "canonical",
        "2026-10-01",
        "",
        "## Alpha\n\nPelican feeding happens at dawn.\n\n## Beta\n\nPelican feeding and nesting happen near the pier.",
    ),
    "20-wiki/x/f-alias.md": (
        "Vellum tool",
        "canonical",
        "2026-10-01",
        "VLMX",
        "## Use\n\nVellum sharpens the quill.",
    ),
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, embed_cache: Path):  # noqa: ANN201
    root = tmp_path_factory.mktemp("features")
    vault = root / "vault"
    for rel, (title, status, updated, aliases, body) in DOCS.items():
        p = vault / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(
            NOTE.format(title=title, status=status, updated=updated, aliases=aliases, body=body),
            encoding="utf-8",
        )
    init_vault(vault)  # adopt the folder: a run refuses one `hippo init` never saw
    settings = HippoSettings(vault=vault, home=root / "home", embed_cache_path=embed_cache)
    assert run_graph(settings).success
    return open_engine(settings)


def top_paths(engine, query: str, **params) -> list[str]:  # noqa: ANN001
    response = engine.search(
        SearchRequest(query=query, mode="lexical"), params=RankingParams(**params), log=False
    )
    return [h.path for h in response.results]


def test_governance_lifts_canonical_over_draft(engine) -> None:  # noqa: ANN001
    assert top_paths(engine, "zorblax calibration steps")[0].endswith("b-canon.md")
    assert top_paths(engine, "zorblax calibration steps", governance=False)[0].endswith(
        "a-draft.md"
    )  # tie → name


def test_freshness_lifts_the_newer_copy(engine) -> None:  # noqa: ANN001
    assert top_paths(engine, "quixotic widget oiling")[0].endswith("d-new.md")
    assert top_paths(engine, "quixotic widget oiling", freshness=False)[0].endswith("c-old.md")


def test_one_section_per_document_shows_the_section_covering_most_terms(engine) -> None:  # noqa: ANN001
    request = SearchRequest(query="pelican feeding nesting", mode="lexical")
    many = engine.search(request, params=RankingParams(one_section_per_document=False), log=False).results
    assert [h.anchor for h in many if h.path.endswith("e-sections.md")] == [
        "20-wiki/x/e-sections.md#Beta",
        "20-wiki/x/e-sections.md#Alpha",
    ]
    one = engine.search(request, params=RankingParams(one_section_per_document=True), log=False).results
    assert [h.anchor for h in one if h.path.endswith("e-sections.md")] == ["20-wiki/x/e-sections.md#Beta"]
    assert one[0].coverage == 1.0


def test_alias_named_in_the_query_boosts_its_document(engine) -> None:  # noqa: ANN001
    request = SearchRequest(query="VLMX quill", mode="lexical")
    plain = engine.search(request, params=RankingParams(alias_boost=1.0), log=False).results[0]
    boosted = engine.search(request, params=RankingParams(alias_boost=1.5), log=False).results[0]
    assert plain.path == boosted.path == "20-wiki/x/f-alias.md"
    assert boosted.score == pytest.approx(plain.score * 1.5, rel=1e-3)


def test_title_boost_scales_with_title_matches(engine) -> None:  # noqa: ANN001
    request = SearchRequest(query="zorblax canon", mode="lexical")
    off = {
        h.path: h.score
        for h in engine.search(request, params=RankingParams(title_boost=0.0), log=False).results
    }
    on = {
        h.path: h.score
        for h in engine.search(request, params=RankingParams(title_boost=1.0), log=False).results
    }
    assert (
        on["20-wiki/x/b-canon.md"] / off["20-wiki/x/b-canon.md"]
        > on["20-wiki/x/a-draft.md"] / off["20-wiki/x/a-draft.md"]
    )
