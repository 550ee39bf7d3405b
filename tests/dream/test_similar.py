"""Layer-3 candidates from embedding similarity: the pure ranking (top-k per note, floor, cap, one row per
pair) on hand-made vectors, and the dream over a real index (Chroma, the bundled embedder) where two notes
with different names but the same content are proposed from the vectors the index already holds."""

from __future__ import annotations

import subprocess

import numpy as np
from dagster import DagsterInstance, materialize

from hippo_assets.dream.definitions import JOB_ASSETS, run_config
from hippo_core.dream.similar import neighbour_pairs, note_vectors
from hippo_resources import build_resources
from hippo_settings import HippoSettings
from tests.conftest import run_graph


def unit(*xs: float) -> np.ndarray:
    v = np.asarray(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_neighbour_pairs_keep_the_floor_the_cap_and_one_row_per_pair() -> None:
    paths = ["a", "b", "c", "d"]
    m = np.vstack([unit(1, 0, 0), unit(0.99, 0.1, 0), unit(0, 1, 0), unit(0, 0.9, 0.3)])
    pairs = neighbour_pairs(paths, m, k=2, floor=0.9, cap=10)
    assert [(a, b) for a, b, _ in pairs] == [("a", "b"), ("c", "d")]
    assert pairs[0][2] > pairs[1][2] >= 0.9
    assert neighbour_pairs(paths, m, k=2, floor=0.9, cap=1) == pairs[:1]
    assert neighbour_pairs(paths, m, k=2, floor=0.999, cap=10) == []
    assert neighbour_pairs(paths[:1], m[:1], k=2, floor=0.0, cap=10) == []  # a note is not its own neighbour


def test_note_vectors_average_chunks_and_skip_notes_without_a_vector() -> None:
    rows = [("c1", "n1.md"), ("c2", "n1.md"), ("c3", "n2.md"), ("c4", "n3.md")]
    vectors = {"c1": unit(1, 0), "c2": unit(0, 1), "c3": unit(1, 1)}
    paths, m = note_vectors(rows, vectors)
    assert paths == ["n1.md", "n2.md"]  # n3 has no stored vector yet
    assert np.allclose(m[0], unit(1, 1)) and np.allclose(np.linalg.norm(m, axis=1), 1.0)


BODY = (
    "# {title}\n\n커피는 취침 8시간 전까지만 마신다. 23시에 자므로 마지막 커피는 오후 3시다. "
    "오후에 커피를 마시면 잠들기까지 오래 걸린다. {extra}\n"
)


def test_the_dream_proposes_a_pair_from_the_stored_vectors(settings: HippoSettings) -> None:
    v = settings.vault
    (v / "20-wiki/health/coffee-deadline.md").write_text(
        BODY.format(title="커피 마감 시간", extra="[[sleep-hygiene]]")
    )
    (v / "20-wiki/health/last-cup.md").write_text(
        BODY.format(title="마지막 한 잔", extra="주말에도 같다. [[sleep-hygiene]]")
    )
    subprocess.run(["git", "-C", str(v), "add", "-A"], check=True)
    subprocess.run(
        ["git", "-C", str(v), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"], check=True
    )
    instance = DagsterInstance.ephemeral()
    assert run_graph(settings, instance).success  # the index embeds the notes once; the dream only reads

    def dream(s: HippoSettings):  # noqa: ANN202
        return materialize(
            JOB_ASSETS, resources=build_resources(s), instance=instance, run_config=run_config(s, True)
        )

    result = dream(settings)
    assert result.success
    lint = next(
        {k: m.value for k, m in e.materialization.metadata.items()}
        for e in result.get_asset_materialization_events()
        if e.asset_key.to_user_string() == "dream_lint"
    )
    sources = lint["layer3"]["candidate_sources"]
    assert sources["by_vectors"] >= 1 and "vectors_skipped" not in sources
    (page,) = sorted((v / "50-ops" / "digest").glob("*.md"))
    text = page.read_text()
    line = next(
        ln
        for ln in text.splitlines()
        if "[[20-wiki/health/coffee-deadline]] · [[20-wiki/health/last-cup]]" in ln
    )
    assert "their vectors are close (cosine 0." in line or "(cosine 1.00)" in line

    capped = dream(settings.model_copy(update={"dream_similar_pairs": 0}))  # the per-run cap holds
    lint = next(
        {k: m.value for k, m in e.materialization.metadata.items()}
        for e in capped.get_asset_materialization_events()
        if e.asset_key.to_user_string() == "dream_lint"
    )
    assert lint["layer3"]["candidate_sources"]["by_vectors"] == 0
