"""Search stages 4a (a question that names its time lifts the best source dated then) and 4c's depth
(newest first never pushes a result out of the top `time_depth`), on a tiny real vault indexed by the real
index assets."""

from __future__ import annotations

import pytest
from dagster import DagsterInstance, materialize

from hippo_assets.index.definitions import ASSETS
from hippo_cli.vault_init import init_vault
from hippo_resources import build_resources
from hippo_search.envelope import SearchRequest
from hippo_search.pipeline import open_engine
from hippo_settings import HippoSettings

AS_OF = "2025-03-10T09:00"  # "a week ago" is around 2025-03-03
NOTES = {
    # the planning note uses the question's words most, but was written weeks before
    "10-notes/plans.md": "---\ndate: 2025-01-05\n---\n# Plans\n\n"
    "I want to buy a kitchen gadget. A kitchen gadget to buy.\n",
    # what happened a week ago says it once
    "10-notes/purchase.md": "---\ndate: 2025-03-03\n---\n# Errands\n\n"
    "Went to the mall to buy a kitchen gadget: an air fryer.\n",
    # the newest note shares a word, and is not about the purchase
    "10-notes/cleanup.md": "---\ndate: 2025-03-09\n---\n# Cleanup\n\nCleaned the kitchen shelves.\n",
    "10-notes/garden.md": "---\ndate: 2025-03-02\n---\n# Garden\n\nPlanted tomatoes.\n",
}
QUESTION = "Which kitchen gadget did I buy a week ago?"


@pytest.fixture(scope="module")
def dated(tmp_path_factory: pytest.TempPathFactory) -> HippoSettings:
    root = tmp_path_factory.mktemp("named-time")
    vault = root / "vault"
    init_vault(vault)
    for rel, text in NOTES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    settings = HippoSettings(vault=vault, home=root / "home", embed_cache_path=root / "embed.sqlite")
    result = materialize(ASSETS, resources=build_resources(settings), instance=DagsterInstance.ephemeral())
    assert result.success
    return settings


def paths(settings: HippoSettings, query: str = QUESTION, **update: object) -> list[str]:
    engine = open_engine(settings, log=False)
    params = engine.params.model_copy(update=update)
    request = SearchRequest(query=query, mode="lexical", lanes=["notes"], as_of=AS_OF)
    return [h.path for h in engine.search(request, params=params, log=False).results]


def test_the_source_dated_when_the_question_says_comes_first(dated: HippoSettings) -> None:
    off = paths(dated, time_ref_slots=0, time_window=1.01)
    assert off[:2] == ["10-notes/plans.md", "10-notes/purchase.md"]  # by words alone
    lifted = paths(dated)  # the shipped parameters
    assert lifted[0] == "10-notes/purchase.md"
    assert "10-notes/plans.md" in lifted  # lifted above, nothing dropped
    # the question names its time, so newest first does not put the cleanup note on top
    assert paths(dated, time_window=0.0)[0] == "10-notes/purchase.md"
    # the same words without a time: no lift (newest first may reorder, the purchase is not forced up)
    assert paths(dated, "Which kitchen gadget did I buy?", time_window=1.01)[0] == "10-notes/plans.md"


def test_the_lane_draws_again_from_the_named_span(dated: HippoSettings) -> None:
    # a lexical pool of one chunk holds only the planning note; the draw from the span finds the purchase
    assert paths(dated, lexical_pool=1, time_ref_slots=0) == ["10-notes/plans.md"]
    assert paths(dated, lexical_pool=1)[0] == "10-notes/purchase.md"


def test_newest_first_reorders_only_the_top_depth(dated: HippoSettings) -> None:
    query = "kitchen gadget"  # names no time
    by_relevance = paths(dated, query, time_window=1.01)
    assert by_relevance[0] == "10-notes/plans.md" and len(by_relevance) >= 3
    # depth 1: nothing can move; the full stage sorts the top by date
    assert paths(dated, query, time_window=0.0, time_depth=1) == by_relevance
    everything = paths(dated, query, time_window=0.0, time_depth=10)
    assert everything[0] == "10-notes/cleanup.md"
    # depth 2: only the first two may swap, the rest keeps its place
    two = paths(dated, query, time_window=0.0, time_depth=2)
    assert sorted(two[:2]) == sorted(by_relevance[:2]) and two[2:] == by_relevance[2:]
    assert two[0] == "10-notes/purchase.md"


def test_as_of_far_back_still_finds_the_old_note_by_meaning(tmp_path_factory: pytest.TempPathFactory) -> None:
    # one old note and many newer ones: `as_of` keeps under an eighth of the vault, so the semantic lane
    # takes its filtered path, which must not return the nearest chunks of any date and drop them after
    root = tmp_path_factory.mktemp("as-of-semantic")
    vault = root / "vault"
    init_vault(vault)
    (vault / "10-notes").mkdir(parents=True, exist_ok=True)
    (vault / "10-notes/old.md").write_text(
        "---\ndate: 2020-01-10\n---\n# Coffee\n\nMy coffee limit is two cups a day.\n", encoding="utf-8"
    )
    for i in range(12):
        (vault / f"10-notes/new-{i:02d}.md").write_text(
            f"---\ndate: 2025-0{1 + i % 9}-1{i % 9}\n---\n# Coffee {i}\n\n"
            f"My coffee limit is now {i + 3} cups a day, noted on day {i}.\n",
            encoding="utf-8",
        )
    settings = HippoSettings(vault=vault, home=root / "home", embed_cache_path=root / "embed.sqlite")
    result = materialize(ASSETS, resources=build_resources(settings), instance=DagsterInstance.ephemeral())
    assert result.success
    engine = open_engine(settings, log=False)
    params = engine.params.model_copy(update={"semantic_pool": 2})
    request = SearchRequest(query="how many cups of coffee a day", mode="semantic", as_of="2021-01-01")
    response = engine.search(request, params=params, log=False)
    assert [h.path for h in response.results] == ["10-notes/old.md"]
