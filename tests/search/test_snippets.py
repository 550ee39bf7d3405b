"""Snippets show where the query matched, and generated navigation pages take no result slot unless asked.

The snippet tests feed the real analyzer's query tokens (kiwipiepy) to the pure window finder; the
engine test writes HOME.md, index.md and a sector hub with the index-pages renderers, indexes the vault
through Dagster and searches it.
"""

from __future__ import annotations

import pytest

from hippo_core.index.tokenize import Tokenizer
from hippo_core.ranking.snippets import ELLIPSIS, best_window, query_snippet, term_matches
from hippo_core.vault.vault_layout import is_navigation_page
from hippo_core.wiki.index_pages import PageInfo, Queues, render_home, render_hub, render_index
from hippo_resources import Vault
from hippo_search.envelope import SearchRequest
from hippo_search.pipeline import open_engine
from hippo_settings import HippoSettings
from tests.conftest import run_graph

FILLER_EN = "The garden report lists the weather of each week and the plants that were watered. " * 8
TAIL_EN = "Coffee naps help alertness after lunch, says the sleep study."
FILLER_KO = "정원 일지는 매주 날씨와 물을 준 식물을 적어 둔 기록이다. " * 20
TAIL_KO = "커피를 마시고 바로 낮잠을 자면 오후 졸음이 줄어든다고 연구는 말한다."


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    return Tokenizer()


@pytest.mark.parametrize(
    ("text", "query", "tail"),
    [(FILLER_EN + TAIL_EN, "coffee nap", TAIL_EN), (FILLER_KO + TAIL_KO, "커피 낮잠", TAIL_KO)],
    ids=["english", "korean"],
)
def test_long_chunk_snippet_shows_the_match_at_its_end(
    tokenizer: Tokenizer, text: str, query: str, tail: str
) -> None:
    assert len(text) > 600
    out = query_snippet(text, tokenizer.query_tokens(query), max_chars=240)
    assert tail in out and out.startswith(ELLIPSIS) and len(out) <= 240
    assert len(out) > 200  # the room before the match is used, starting at a sentence
    assert out.removeprefix(ELLIPSIS).split(". ")[0] + ". " in text


def test_snippet_picks_the_window_with_most_query_terms(tokenizer: Tokenizer) -> None:
    lone = "Coffee is mentioned once here. " + "Filler words about gardens and rain. " * 10
    both = "Only here do coffee and naps meet in one sentence."
    text = lone + both + " More filler about gardens and rain." * 10
    out = query_snippet(text, tokenizer.query_tokens("coffee nap"), max_chars=120)
    assert both in out and "mentioned once" not in out and out.endswith(ELLIPSIS)


def test_snippet_without_a_match_is_the_chunk_start_within_the_budget(tokenizer: Tokenizer) -> None:
    text = "First line.\n\nSecond   paragraph " + "word " * 200
    out = query_snippet(text, tokenizer.query_tokens("zebra"), max_chars=50)
    assert out.startswith("First line. Second paragraph") and out.endswith(ELLIPSIS) and len(out) <= 50
    assert query_snippet("Short\n text.", tokenizer.query_tokens("text")) == "Short text."
    assert query_snippet(text, [], max_chars=50) == out


def test_terms_match_korean_inside_words_and_latin_only_at_word_start(tokenizer: Tokenizer) -> None:
    tokens = tokenizer.query_tokens("낮잠 nap")
    found = {t for _, t in term_matches("낮잠을 잤다. A snap, then naps; NAP.", tokens)}
    assert found == {"낮잠", "nap"}
    starts = [p for p, t in term_matches("snap naps NAP", tokens) if t == "nap"]
    assert starts == [5, 10]


def test_window_counts_distinct_terms_and_bigrams_count_less() -> None:
    weights = {"coffee": 1.0, "nap": 1.0, "커피": 0.25}
    matches = [(0, "coffee"), (5, "coffee"), (8, "coffee"), (100, "coffee"), (110, "nap")]
    assert best_window(matches, weights, 40) == (100, 113)
    assert best_window([], weights, 40) is None
    assert best_window([(0, "커피"), (3, "커피"), (50, "nap")], weights, 20) == (50, 53)


def test_navigation_pages_are_the_generated_ones() -> None:
    nav = ["HOME.md", "index.md", "log.md", "20-wiki/health/_hub.md"]
    assert all(is_navigation_page(p, "map") for p in nav)
    assert not any(
        is_navigation_page(p, "map")
        for p in ["notes/HOME.md", "20-wiki/health/sleep.md", "20-wiki/_hub.md", "hub.md"]
    )
    # a person's own index.md or log.md (not the `type: map` page hippo lays out) is a note like any other
    assert not any(is_navigation_page(p, t) for p in nav for t in (None, "note", "concept"))


def test_a_persons_own_index_page_is_searched_like_any_note(settings: HippoSettings) -> None:
    vault = Vault(root=str(settings.vault))
    vault.write_text("index.md", "# My own index\n\nThe yakcactus blooms in my kitchen every March.\n")
    vault.commit("a person's own index page")
    assert run_graph(settings).success
    engine = open_engine(settings, log=False)
    found = engine.search(SearchRequest(query="yakcactus blooms")).results
    assert found and found[0].path == "index.md"


def test_search_leaves_navigation_out_unless_asked_and_snippets_the_match(
    settings: HippoSettings,
) -> None:
    vault = Vault(root=str(settings.vault))
    pages = [
        PageInfo(
            path="20-wiki/health/sleep-hygiene.md",
            title="Sleep hygiene",
            sector="health",
            type="concept",
            updated=None,
        )
    ]
    queues = Queues(inbox=0, staging=0, pending_approvals=0, gate_failures=0)
    vault.write_text("HOME.md", render_home(pages, queues, [], []))  # as the index_pages asset renders them
    vault.write_text("index.md", render_index(pages))
    vault.write_text("20-wiki/health/_hub.md", render_hub("health", pages))
    vault.write_text("notes/garden-log.md", f"# Garden log\n\n{FILLER_KO}{TAIL_KO}\n")
    vault.commit("navigation pages and a long note")
    assert run_graph(settings).success
    engine = open_engine(settings, log=False)

    query = "health hub Sleep hygiene Index Home"
    default = engine.search(SearchRequest(query=query, limit=50))
    asked = engine.search(SearchRequest(query=query, limit=50, include_navigation=True))
    generated = {"HOME.md", "index.md", "20-wiki/health/_hub.md"}
    assert default.results and not any(h.path in generated for h in default.results)
    nav = {h.path for h in asked.results if h.path in generated}
    assert "20-wiki/health/_hub.md" in nav
    assert {h.anchor for h in default.results} <= {h.anchor for h in asked.results}

    hit = next(
        h for h in engine.search(SearchRequest(query="커피 낮잠")).results if h.path.startswith("notes/")
    )
    assert TAIL_KO in hit.snippet and hit.snippet.startswith(ELLIPSIS)
