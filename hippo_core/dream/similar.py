"""Layer-3 candidates from embedding similarity: notes whose vectors are close may be one concept written
twice. Pure: the caller hands in the vectors the index already holds (nothing is embedded here).

A note's vector is the mean of its chunks' unit vectors, renormalised. Each note proposes its `k` nearest
other notes at cosine >= `floor`; a pair is kept once, and at most `cap` pairs (the closest) per dream.

The floor, `SIMILARITY_FLOOR`, was chosen from a measurement, not fitted to a test
(`python -m eval.dream_floor`, result in eval/results/dream_floor.json): 400 MS MARCO passages and their
Korean translations (`msmarco-en` / `msmarco-ko`, the same ids) embedded by the product's embedder
(multilingual-e5-small) as notes; a passage and its translation are the duplicate pairs, every other
top-5 neighbour pair is not. Two folds by passage id: on each fold the floor with the best F1 was taken
(0.855 and 0.85) and scored on the other fold (F1 0.51 and 0.67, precision 0.55 / 0.63). The shipped floor
is the mean of the two choices, 0.85. The model's cosines are compressed (a translation: median 0.86;
unrelated top-5 neighbours: median 0.83, 99th percentile 0.88), so the floor only narrows the field: the
LLM confirms, and the per-run cap and LLM budget bound the cost. A translation is a harder duplicate than a
same-language rewording, which clears the floor more easily.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

SIMILARITY_FLOOR = 0.85
NEIGHBOURS = 5
BLOCK = 1024  # rows per block of the similarity product: a 1024 x N float32 block at a time


def note_vectors(
    chunk_paths: Sequence[tuple[str, str]], vectors: Mapping[str, np.ndarray]
) -> tuple[list[str], np.ndarray]:
    """(paths, unit matrix) from (chunk id, note path) rows and the chunk vectors found; a note with no
    vector is left out (the index has not embedded it yet)."""
    sums: dict[str, np.ndarray] = {}
    for chunk_id, path in chunk_paths:
        v = vectors.get(chunk_id)
        if v is None:
            continue
        sums[path] = sums[path] + v if path in sums else np.asarray(v, dtype=np.float32).copy()
    paths = sorted(sums)
    if not paths:
        return [], np.zeros((0, 0), dtype=np.float32)
    mat = np.vstack([sums[p] for p in paths]).astype(np.float32)
    norms = np.linalg.norm(mat, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return paths, mat / norms


def neighbour_pairs(
    paths: Sequence[str],
    matrix: np.ndarray,
    k: int = NEIGHBOURS,
    floor: float = SIMILARITY_FLOOR,
    cap: int = 100,
) -> list[tuple[str, str, float]]:
    """Pairs (a < b, cosine) where b is among a's `k` nearest or a among b's, at cosine >= floor; the
    `cap` closest, closest first. Exact (a blocked matrix product), O(N^2 / BLOCK) products of BLOCK rows."""
    n = len(paths)
    if n < 2 or k <= 0 or cap <= 0:
        return []
    k = min(k, n - 1)
    best: dict[tuple[int, int], float] = {}
    for start in range(0, n, BLOCK):
        block = matrix[start : start + BLOCK] @ matrix.T
        rows = np.arange(block.shape[0])
        block[rows, rows + start] = -np.inf  # a note is not its own neighbour
        top = np.argpartition(-block, k - 1, axis=1)[:, :k]
        for r in range(block.shape[0]):
            for c in top[r]:
                sim = float(block[r, c])
                if sim < floor:
                    continue
                i, j = sorted((start + r, int(c)))
                best[(i, j)] = max(sim, best.get((i, j), -1.0))
    ranked = sorted(best.items(), key=lambda kv: (-kv[1], paths[kv[0][0]], paths[kv[0][1]]))[:cap]
    return [(paths[i], paths[j], round(s, 4)) for (i, j), s in ranked]
