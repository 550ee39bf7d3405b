"""32 concurrent searches against a real librarian (uvicorn) while a real `hippo run --force` re-embeds,
adds and removes notes: zero errors, zero 5xx, and every answer reads one generation (each hit is a chunk of
the generation the answer names)."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from hippo_resources import LexicalStore
from hippo_settings import HippoSettings
from tests.conftest import run_graph
from tests.reliability.servers import FakeEmbedder, free_port

THREADS = 32
WORDS = [
    "sleep",
    "coffee",
    "kelp",
    "harbour",
    "lantern",
    "granite",
    "orchard",
    "falcon",
    "copper",
    "meadow",
    "cipher",
    "violet",
    "ember",
    "glacier",
    "saddle",
    "quartz",
    "tundra",
    "willow",
    "pepper",
    "anchor",
    "beacon",
    "canyon",
    "delta",
    "fjord",
    "낮잠",
    "커피",
    "회의",
    "정원",
    "바다",
    "등대",
    "구리",
    "초원",
    "수정",
    "버드나무",
]


def bulk_note(i: int, version: int) -> str:
    rng = random.Random(i * 1000 + version)
    sections = []
    for s in range(3):
        words = " ".join(rng.choice(WORDS) for _ in range(60))
        sections.append(f"## Part {s} of note {i}\n\n{words} (version {version}).\n")
    return f"# Bulk note {i}\n\n" + "\n".join(sections)


def env_of(settings: HippoSettings, embedder: FakeEmbedder, tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "HIPPO_VAULT": str(settings.vault),
        "HIPPO_HOME": str(settings.home),
        "HIPPO_EMBED_URL": embedder.url,
        "HIPPO_EMBED_MODEL": "fake-hash",
        "HIPPO_EMBED_CACHE": str(settings.embed_cache),
        "DAGSTER_HOME": str(tmp_path / "dagster"),
    }


@pytest.fixture
def librarian(
    tmp_path: Path, vault: Path, embedder: FakeEmbedder
) -> Iterator[tuple[HippoSettings, str, dict]]:
    settings = HippoSettings.from_env(
        {"HIPPO_EMBED_URL": embedder.url, "HIPPO_EMBED_MODEL": "fake-hash"},
        vault=vault,
        home=tmp_path / "home",
    ).model_copy(update={"embed_cache_path": tmp_path / "cache.sqlite"})
    bulk = vault / "20-wiki" / "bulk"
    bulk.mkdir(parents=True)
    for i in range(120):
        (bulk / f"note-{i:03d}.md").write_text(bulk_note(i, 0), encoding="utf-8")
    assert run_graph(settings).success
    env = env_of(settings, embedder, tmp_path)
    port = free_port()
    log = (tmp_path / "librarian.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "hippo_cli.main", "serve", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        else:
            pytest.fail("the librarian did not start")
        yield settings, url, env
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)
        log.close()


def test_32_concurrent_searches_during_a_full_reindex_get_no_error(
    librarian: tuple[HippoSettings, str, dict], tmp_path: Path
) -> None:
    settings, url, env = librarian
    bulk = settings.vault / "20-wiki" / "bulk"
    for i in range(120):  # every bulk chunk changes: re-embedded, vectors replaced
        (bulk / f"note-{i:03d}.md").write_text(bulk_note(i, 1), encoding="utf-8")
    for i in range(100, 120):  # some notes leave: their vectors move to the trash
        (bulk / f"note-{i:03d}.md").unlink()
    for i in range(120, 180):  # new notes: new vectors
        (bulk / f"note-{i:03d}.md").write_text(bulk_note(i, 1), encoding="utf-8")

    outcomes: Counter[str] = Counter()
    statuses: Counter[str] = Counter()  # ok / empty / degraded (a Chroma read failed: lexical lane only)
    answers: list[tuple[str, list[str]]] = []
    lock = threading.Lock()
    stop = threading.Event()

    def hammer(seed: int) -> None:
        rng = random.Random(seed)
        with httpx.Client(base_url=url, timeout=60) as client:
            while not stop.is_set():
                body = {"query": " ".join(rng.sample(WORDS, 2)), "limit": 10}
                try:
                    resp = client.post("/api/v1/search", json=body)
                except httpx.HTTPError as exc:
                    with lock:
                        outcomes[f"transport:{type(exc).__name__}"] += 1
                    continue
                with lock:
                    outcomes[str(resp.status_code)] += 1
                    if resp.status_code == 200:
                        data = resp.json()
                        statuses[data["status"]] += 1
                        answers.append((data["generation"], [h["chunk_id"] for h in data["results"]]))

    threads = [threading.Thread(target=hammer, args=(n,)) for n in range(THREADS)]
    for t in threads:
        t.start()
    time.sleep(1.0)
    run = subprocess.run(
        [sys.executable, "-m", "hippo_cli.main", "run", "--force"],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    time.sleep(2.0)  # and a little after the new generation is live
    stop.set()
    for t in threads:
        t.join(timeout=120)
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]

    requests = sum(outcomes.values())
    errors = requests - outcomes["200"]
    print(
        f"32-thread search during hippo run --force: {errors} errors / {requests} requests {dict(outcomes)}, "
        f"answers {dict(statuses)}"
    )
    assert requests >= 200, outcomes
    assert errors == 0, (outcomes, (tmp_path / "librarian.log").read_text()[-4000:])

    # one generation per answer: every hit is a chunk of the generation the answer names
    store = LexicalStore(root=str(settings.lexical_dir))
    tables = {}
    for generation, _ in answers:
        if generation not in tables:
            tables[generation] = set(store.view(generation).live_table()["chunk_id"].to_list())
    assert len(tables) == 2  # the one before the run and the one it published
    mixed = [(g, ids) for g, ids in answers if not set(ids) <= tables[g]]
    assert not mixed, mixed[:3]
