"""Search that knows time, on a tiny real vault indexed by the real index assets: a note's date (`date:`,
else `created:`, else the file's mtime) in every result, `as_of` masking before ranking, newest first
among results that answer alike, and the same over REST, MCP and `hippo search`."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
from pathlib import Path

import anyio
import httpx
import pytest
from dagster import DagsterInstance, materialize
from mcp import Client

from hippo_assets.index.definitions import ASSETS
from hippo_cli.vault_init import init_vault
from hippo_resources import build_resources
from hippo_search.envelope import SearchRequest
from hippo_search.pipeline import open_engine
from hippo_settings import HippoSettings
from tests.search.test_envelope import HIPPO, serving

QUERY = "caffeine cutoff"
MTIME = dt.datetime(2023, 6, 1, 12, 0, tzinfo=dt.UTC)

NOTES = {
    # three dates of one fact; the oldest says it twice, so it leads on relevance alone
    "10-notes/cutoff-2024.md": "---\ndate: 2024-01-10\n---\n# Caffeine\n\n"
    "My caffeine cutoff is six hours before bed. The caffeine cutoff keeps me asleep.\n",
    "10-notes/cutoff-2025.md": "---\ncreated: 2025-02-01T08:30\n---\n# Caffeine\n\n"
    "My caffeine cutoff moved to 15:00, earlier than before.\n",
    "10-notes/cutoff-2026.md": "---\ndate: 2026-03-01\ncreated: 2026-03-01T21:05\n---\n# Caffeine\n\n"
    "My caffeine cutoff is now 14:00 on weekdays.\n",
    "10-notes/undated.md": "# Tea\n\nGreen tea has less caffeine than coffee; no cutoff for tea.\n",
}
DATES = {
    "10-notes/cutoff-2024.md": "2024-01-10",
    "10-notes/cutoff-2025.md": "2025-02-01T08:30:00",
    "10-notes/cutoff-2026.md": "2026-03-01T21:05:00",
    "10-notes/undated.md": "2023-06-01T12:00:00",  # its file's mtime
}


def index(settings: HippoSettings) -> None:
    result = materialize(ASSETS, resources=build_resources(settings), instance=DagsterInstance.ephemeral())
    assert result.success


@pytest.fixture(scope="module")
def timed(tmp_path_factory: pytest.TempPathFactory) -> HippoSettings:
    root = tmp_path_factory.mktemp("time")
    vault = root / "vault"
    init_vault(vault)
    for rel, text in NOTES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    os.utime(vault / "10-notes/undated.md", (MTIME.timestamp(), MTIME.timestamp()))
    settings = HippoSettings(vault=vault, home=root / "home", embed_cache_path=root / "embed.sqlite")
    index(settings)
    return settings


def search(settings: HippoSettings, **kw: object) -> list:
    engine = open_engine(settings, log=False)
    params = kw.pop("params", None)
    request = SearchRequest(query=QUERY, mode="lexical", lanes=["notes"], **kw)  # type: ignore[arg-type]
    return engine.search(request, params=params, log=False).results  # type: ignore[arg-type]


def test_every_result_carries_its_sources_date(timed: HippoSettings) -> None:
    hits = search(timed)
    assert {h.path: h.date for h in hits} == DATES


def test_as_of_masks_sources_dated_after_it_before_ranking(timed: HippoSettings) -> None:
    assert {h.path for h in search(timed, as_of="2024-12-31")} == {
        "10-notes/cutoff-2024.md",
        "10-notes/undated.md",
    }
    # a day means its whole day: the note written that evening is in
    assert "10-notes/cutoff-2026.md" in {h.path for h in search(timed, as_of="2026-03-01")}
    assert "10-notes/cutoff-2026.md" not in {h.path for h in search(timed, as_of="2026-03-01T21:00")}
    # masked before ranking, not cut after it: a page of one still finds the older note
    assert [h.path for h in search(timed, as_of="2025-03-01", limit=1, params=None)][0] in {
        "10-notes/cutoff-2024.md",
        "10-notes/cutoff-2025.md",
    }
    with pytest.raises(ValueError, match="as_of must be an ISO date"):
        SearchRequest(query=QUERY, as_of="next week")


def test_newest_first_among_results_that_answer_alike(timed: HippoSettings) -> None:
    engine = open_engine(timed, log=False)
    off = engine.params.model_copy(update={"time_window": 1.01})
    on = engine.params.model_copy(update={"time_window": 0.5})
    pair = ["10-notes/cutoff-2024.md", "10-notes/cutoff-2025.md"]
    by_relevance = [h.path for h in search(timed, as_of="2025-12-31", params=off) if h.path in pair]
    assert by_relevance == pair  # the older note says it twice
    newest = [h.path for h in search(timed, as_of="2025-12-31", params=on) if h.path in pair]
    assert newest == pair[::-1]  # the current value first, the older still listed
    history = search(timed, as_of="2025-12-31", params=on, include_history=True)
    assert [h.path for h in history if h.path in pair] == pair
    # a result that answers clearly better is never passed: with a tight window the order stays
    tight = engine.params.model_copy(update={"time_window": 0.999})
    assert [h.path for h in search(timed, as_of="2025-12-31", params=tight) if h.path in pair] == pair


def test_an_edited_date_is_picked_up_by_the_next_incremental_run(
    tmp_path: Path, timed: HippoSettings
) -> None:
    vault = tmp_path / "vault"
    init_vault(vault)
    (vault / "10-notes").mkdir(parents=True, exist_ok=True)
    for rel in ("10-notes/cutoff-2024.md", "10-notes/cutoff-2025.md"):
        (vault / rel).write_text(NOTES[rel], encoding="utf-8")
    settings = HippoSettings(vault=vault, home=tmp_path / "home", embed_cache_path=timed.embed_cache)
    index(settings)
    note = vault / "10-notes/cutoff-2024.md"
    note.write_text(NOTES["10-notes/cutoff-2024.md"].replace("2024-01-10", "2025-06-30"), encoding="utf-8")
    index(settings)
    dates = {h.path: h.date for h in search(settings)}
    assert dates["10-notes/cutoff-2024.md"] == "2025-06-30"
    assert {h.path for h in search(settings, as_of="2025-03-01")} == {"10-notes/cutoff-2025.md"}


def test_rest_mcp_and_the_cli_give_the_same_dated_results(timed: HippoSettings, tmp_path: Path) -> None:
    body = {"query": QUERY, "limit": 5, "as_of": "2025-12-31", "lanes": ["notes"]}
    with serving(timed, tmp_path / "serve.log") as (url, env):
        rest = httpx.post(f"{url}/api/v1/search", json=body, timeout=120)
        assert rest.status_code == 200, rest.text
        bad = httpx.post(f"{url}/api/v1/search", json={**body, "as_of": "someday"}, timeout=120)
        assert 400 <= bad.status_code < 500 and "as_of" in bad.text

        async def over_mcp() -> dict:
            async with Client(f"{url}/mcp") as client:
                result = await client.call_tool("hippo_search", body)
                assert not result.is_error
                return result.structured_content

        mcp = anyio.run(over_mcp)
        cli = subprocess.run(
            [
                *HIPPO,
                "search",
                QUERY,
                "--k",
                "5",
                "--as-of",
                "2025-12-31",
                "--lane",
                "notes",
                "--json",
                "--local",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert cli.returncode == 0, cli.stderr[-2000:]
        refused = subprocess.run(
            [*HIPPO, "search", QUERY, "--as-of", "someday", "--local"],
            env=env,
            capture_output=True,
            text=True,
        )
        assert refused.returncode == 2 and "as_of" in refused.stderr
    envelope = rest.json()
    assert mcp == envelope == json.loads(cli.stdout)
    got = {h["path"]: h["date"] for h in envelope["results"]}
    assert got == {p: d for p, d in DATES.items() if d <= "2025-12-31T23:59:59"}


def test_a_section_whose_facts_were_all_superseded_is_marked_stale_and_demoted(
    timed: HippoSettings, tmp_path: Path
) -> None:
    from hippo_core.facts.dates import parse_date
    from hippo_core.facts.model import Fact, FactObject, Provenance
    from hippo_resources.fact_store import FactStore

    engine = open_engine(timed, log=False)
    off = engine.params.model_copy(update={"time_window": 1.01})
    old, new = "10-notes/cutoff-2024.md", "10-notes/cutoff-2025.md"
    anchors = {h.path: h.anchor for h in search(timed, params=off)}

    def stated(value: str, day: str, path: str) -> Fact:
        return Fact(
            subject="me",
            predicate="caffeine_cutoff",
            cardinality="single",
            object=FactObject(text=value),
            statement=f"My caffeine cutoff is {value}.",
            valid_at=parse_date(day),
            provenance=[Provenance(anchor=anchors[path], content_hash="h", extractor="reader:inline")],
        ).with_id()

    store = FactStore(path=str(tmp_path / "facts.sqlite"))
    store.add(stated("six hours before bed", "2024-01-10", old))
    store.add(stated("15:00", "2025-02-01", new))
    engine.fact_store = store

    def ask(**kw: object) -> list:
        request = SearchRequest(query=QUERY, mode="lexical", lanes=["notes"], **kw)  # type: ignore[arg-type]
        return engine.search(request, params=off, log=False).results

    # pending: nothing is stale until a person ticks the supersession
    assert not any(h.stale for h in ask()) and [h.path for h in ask()][0] == old
    (proposal,) = store.proposals()
    assert store.decide(proposal.proposal_id, "supersede").applied
    now = ask()
    marked = {h.path: (h.stale, h.superseded_by) for h in now}
    assert marked[old] == (True, [anchors[new]]) and marked[new] == (False, [])
    assert [h.path for h in now].index(new) < [h.path for h in now].index(old)  # demoted, still found
    # with the history the relevance order stays, the mark too
    history = ask(include_history=True)
    assert [h.path for h in history][0] == old and history[0].stale
    # as of a day when the old value held, it is not stale
    assert not any(h.stale for h in ask(as_of="2024-12-31"))


VERSIONS = {
    # one fact written on two days, a second version on the same day, and a newer note sharing one term
    "cutoff-2024.md": "---\ndate: 2024-01-10\n---\n# Caffeine\n\n"
    "My caffeine cutoff is six hours before bed. The caffeine cutoff keeps me asleep.\n",
    "cutoff-morning.md": "---\ncreated: 2025-02-01T08:30\n---\n# Caffeine\n\n"
    "My caffeine cutoff moved to 15:00. A caffeine cutoff at 15:00 is earlier than before.\n",
    "cutoff-evening.md": "---\ncreated: 2025-02-01T21:00\n---\n# Caffeine\n\n"
    "Caffeine cutoff still 15:00 after a long day of meetings, errands, calls and a late train home.\n",
    "tea-2025.md": "---\ndate: 2025-06-01\n---\n# Tea\n\nGreen tea has less caffeine than coffee does.\n",
}


def test_newest_first_passes_only_another_version_of_the_answer(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    init_vault(vault)
    for name, text in VERSIONS.items():
        (vault / name).write_text(text, encoding="utf-8")
    settings = HippoSettings(vault=vault, home=tmp_path / "home", embed_cache_path=tmp_path / "embed.sqlite")
    index(settings)
    engine = open_engine(settings, log=False)

    def order(**update: object) -> list[str]:
        params = engine.params.model_copy(update=update)
        return [h.path for h in search(settings, params=params)]

    relevance = order(time_window=1.01)
    assert set(relevance) == set(VERSIONS) and relevance[0] == "cutoff-2024.md"
    # the morning note says it twice, so it leads the evening one on relevance alone
    assert relevance.index("cutoff-morning.md") < relevance.index("cutoff-evening.md")
    # a score ratio alone: the newest note comes first though it shares one of the two terms
    loose = order(time_window=0.0, time_coverage_share=0.0, time_by_day=False)
    assert loose == ["tea-2025.md", "cutoff-evening.md", "cutoff-morning.md", "cutoff-2024.md"]
    # it covers 1 of 2 terms: under a share of 0.75 it passes none of them; the two of one day keep
    # their relevance order and both pass the 2024 note
    strict = order(time_window=0.0, time_coverage_share=0.75, time_by_day=True)
    assert strict == ["cutoff-morning.md", "cutoff-evening.md", "cutoff-2024.md", "tea-2025.md"]
