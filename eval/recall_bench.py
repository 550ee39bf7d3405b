"""Prompt-time recall through the real hook process: does it inject when the memory can answer, and stay
quiet when it cannot?

    python -m eval.recall_bench --locomo ../shared/eval-data/locomo-dev --lme DIR [--max-prompts N]
        [--work DIR] [--conversations conv-26] [--lme-questions 3] [--json out.json]

Answerable prompts: LoCoMo-dev questions, each asked in an index of its own conversation (built as
`eval.bench_locomo` builds it), and LongMemEval-dev questions in their own haystack (`--lme` is the
unpacked tarball; each haystack is cut to its evidence sessions plus `--fillers` other sessions, to keep
the build sane on a small machine). Unanswerable prompts: generic requests (code, writing, chit-chat,
other people's data) and the first user turns of LongMemEval filler sessions that are not in the index
asked. Every prompt runs through `hippo hook claude-code` as a real process, with and without a running
librarian (`hippo serve`). Reported per kind: injection rate, the share of answerable prompts whose
injected text holds the evidence (against the search's own Hit@3), bytes injected, hook latency p50/p95.

Thresholds: the router's `need_threshold` is chosen on one set and reported on the other (LoCoMo ->
LongMemEval and back): for each set the candidate lists are collected once, then the bar that keeps
unanswerable injection under 5 % with the most answerable injections is chosen on the other set.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from eval.results import _relative as relative_path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CACHE = Path("~/.cache/hippocampus/bench-embed.sqlite")
GENERIC_PROMPTS = (
    "Write a Python function that reverses a singly linked list.",
    "Can you explain the difference between a process and a thread?",
    "Draft a polite email declining a meeting invitation for Friday.",
    "Write a haiku about autumn leaves.",
    "How do I center a div with CSS flexbox?",
    "Translate 'good morning, how are you' into Spanish.",
    "What's the time complexity of quicksort in the worst case?",
    "Give me a regex that matches ISO 8601 dates.",
    "Tell me a joke about programmers.",
    "Summarize the plot of Romeo and Juliet in three sentences.",
    "Refactor this loop into a list comprehension: for x in xs: if x > 0: out.append(x*2)",
    "What is the capital of Australia?",
    "hi, how's it going?",
    "Write a SQL query that returns the top 5 customers by total order value.",
    "What did Barack Obama study at Columbia University?",
    "How many moons does Jupiter have?",
    "Explain how TLS certificate pinning works.",
    "Compose a short birthday message for a coworker.",
    "What are good stretches for lower back pain?",
    "Convert 72 degrees Fahrenheit to Celsius.",
)


# --- data ------------------------------------------------------------------------------------------------
def locomo_prompts(folder: Path, conv: str) -> list[dict[str, Any]]:
    from eval.bench_locomo import locomo_export

    _, queries, qrels = locomo_export(folder, {conv})
    return [
        {
            "id": qid,
            "set": "locomo",
            "kind": "answerable",
            "prompt": q["text"],
            "evidence": sorted(qrels[qid]),
            "index": conv,
        }
        for qid, q in queries.items()
        if qrels.get(qid) and q.get("category") != 5  # adversarial questions have no answer in the memory
    ]


def lme_questions(folder: Path) -> list[dict[str, Any]]:
    rows = [
        json.loads(line)
        for line in (folder / "questions.jsonl").read_text(encoding="utf-8").splitlines()
        if line
    ]
    return [q for q in rows if not q["abstention"]]


def lme_sessions(folder: Path, qid: str) -> dict[str, Path]:
    return {p.stem.rsplit("-", 1)[-1]: p for p in sorted((folder / "vault" / qid).glob("*.md"))}


def first_user_turn(note: Path) -> str | None:
    text = note.read_text(encoding="utf-8")
    marker = "- user\n"
    at = text.find(marker)
    if at < 0:
        return None
    body = text[at + len(marker) :].split("\n## Turn", 1)[0].strip()
    return body or None


def lme_kept_sessions(q: dict[str, Any], sessions: dict[str, Path], fillers: int) -> list[str]:
    evidence = set(q["evidence_sessions"])
    others = [s for s in sessions if s not in evidence]
    return sorted(evidence | set(others[:fillers]))


def build_lme(folder: Path, qid: str, work: Path, fillers: int = 8, cache: Path = DEFAULT_CACHE) -> Any:
    """A vault holding this question's evidence sessions and `fillers` others (as notes), indexed."""
    from dagster import DagsterInstance, materialize

    from hippo_assets.definitions import ASSET_CHECKS, ASSETS
    from hippo_cli.vault_init import init_vault
    from hippo_resources import build_resources
    from hippo_settings import HippoSettings

    q = next(x for x in lme_questions(folder) if x["qid"] == qid)
    sessions = lme_sessions(folder, qid)
    base = work / qid
    settings = HippoSettings(vault=base / "vault", home=base / "home", embed_cache_path=cache.expanduser())
    if (base / "built").exists():
        return settings
    if base.exists():
        shutil.rmtree(base)
    init_vault(base / "vault")
    notes = base / "vault" / "60-chats"
    notes.mkdir(parents=True)
    for sid in lme_kept_sessions(q, sessions, fillers):
        shutil.copy(sessions[sid], notes / sessions[sid].name)
    result = materialize(
        [*ASSETS, *ASSET_CHECKS], resources=build_resources(settings), instance=DagsterInstance.ephemeral()
    )
    if not result.success:
        raise RuntimeError(f"the LongMemEval build of {qid} failed")
    (base / "built").write_text("ok", encoding="utf-8")
    return settings


def build_locomo(folder: Path, conv: str, work: Path, cache: Path = DEFAULT_CACHE) -> Any:
    from eval.bench_locomo import build, locomo_export

    base = work / conv
    from hippo_settings import HippoSettings

    settings = HippoSettings(
        vault=base / "vault", home=base / "home-segments", embed_cache_path=cache.expanduser()
    )
    if (base / "built").exists():
        return settings
    export, _, _ = locomo_export(folder, {conv})
    settings = build(export, base, True, cache)
    (base / "built").write_text("ok", encoding="utf-8")
    return settings


# --- running the hook -------------------------------------------------------------------------------------
def hook_env(settings: Any, port: int, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HIPPO_", "DAGSTER_"))}
    env |= {
        "HIPPO_HOME": str(settings.home), "HIPPO_VAULT": str(settings.vault), "HIPPO_PORT": str(port),
        "HIPPO_EMBED_CACHE": str(settings.embed_cache), "HIPPO_HOOK_INGEST": "false", "HIPPO_RECALL_SKILLS": "false",
        "PYTHONPATH": str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", ""),
    }  # fmt: skip
    return env | (extra or {})


def run_hook(env: dict[str, str], prompt: str) -> tuple[str | None, float]:
    payload = json.dumps(
        {"hook_event_name": "UserPromptSubmit", "session_id": "bench", "cwd": "/", "prompt": prompt}
    )
    started = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-m", "hippo_cli.main", "hook", "claude-code"],
        input=payload, capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    elapsed = time.monotonic() - started
    if out.returncode != 0:
        raise RuntimeError(f"the hook exited {out.returncode}")
    if not out.stdout.strip():
        return None, elapsed
    return json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"], elapsed


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def librarian(settings: Any, port: int, extra: dict[str, str] | None = None) -> Iterator[None]:
    """`hippo serve` on these stores, warmed up, stopped after."""
    import urllib.request

    env = hook_env(settings, port, extra)
    proc = subprocess.Popen(
        [sys.executable, "-m", "hippo_cli.main", "serve", "--port", str(port)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1):  # noqa: S310
                    break
            except OSError:
                time.sleep(0.5)
        else:
            raise RuntimeError("the librarian did not start")
        body = json.dumps({"prompt": "warm up", "skills": False}).encode()
        req = urllib.request.Request(f"http://127.0.0.1:{port}/api/v1/recall", data=body, method="POST")
        req.add_header("Content-Type", "application/json")
        urllib.request.urlopen(req, timeout=300).read()  # noqa: S310 - loads the generation and embedder
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


def anchor_matches(anchor: str, target: str) -> bool:
    """A result's anchor stands for the target: the same anchor, or a section of the target note."""
    return anchor == target or (target.endswith(".md") and anchor.startswith(target + "#"))


def evidence_in(context: str | None, evidence: list[str], covers: dict[str, set[str]]) -> bool:
    """The injected text holds an evidence anchor (LoCoMo: a message or a segment covering the turn;
    LongMemEval: a section of an evidence session). Anchors are matched whole (`…#m2` is not `…#m23`)."""
    if not context:
        return False
    for e in evidence:
        for a in covers.get(e, {e}):
            if a.endswith(".md") and a + "#" in context:
                return True
            if f"- {a} (" in context or f"- {a}:" in context:
                return True
    return False


def evidence_covered(anchors: list[str], evidence: list[str], covers: dict[str, set[str]]) -> bool:
    return any(anchor_matches(h, a) for h in anchors for e in evidence for a in covers.get(e, {e}))


def invert(covers: dict[str, set[str]]) -> dict[str, set[str]]:
    """anchor -> turn ids (bench_locomo) as turn id -> anchors."""
    out: dict[str, set[str]] = {}
    for anchor, ids in covers.items():
        for i in ids:
            out.setdefault(i, set()).add(anchor)
    return out


def pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


# --- candidate lists and the router, offline: the bars chosen leaving one set out -------------------------
def candidates_for(settings: Any, prompts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each prompt's route candidates from both engines the hook meets: the librarian's (both lanes,
    `hits`) and the in-process one (the lexical lane alone, Hangul by its bigrams, `lexical`)."""
    from hippo_search.pipeline import lexical_engine, open_engine
    from hippo_work.route import _candidates, prompt_query

    engines = {
        "hits": open_engine(settings, log=False),
        "lexical": lexical_engine(settings, morphology=False),
    }
    rows = []
    for p in prompts:
        query = prompt_query(p["prompt"])
        got = {
            k: [h.model_dump() for h in _candidates(e, query, None)] if query else []
            for k, e in engines.items()
        }
        rows.append({**p, **got})
    return rows


BAR_FIELD = {"hits": "need_threshold", "lexical": "lexical_need_threshold"}
BARS = [round(0.20 + 0.025 * i, 3) for i in range(33)]  # 0.20 .. 1.00


def simulate(
    rows: list[dict[str, Any]], covers: dict[str, set[str]], key: str, params: Any, max_bytes: int = 1500
) -> list[dict[str, Any]]:
    """What the hook would inject for each row's candidates (`key`: "hits" or "lexical"): the product's
    own router, item choice and rendering (`judge_hits`, `recall_items`, `render_recall`)."""
    from hippo_core.recall.context import render_recall
    from hippo_search.envelope import SearchHit
    from hippo_work.route import DeterministicRouter, judge_hits, prompt_query, recall_items

    router = DeterministicRouter(params)
    out = []
    for r in rows:
        hits = [SearchHit.model_validate(h) for h in r[key]]
        result = judge_hits(prompt_query(r["prompt"]), hits, router)
        context = render_recall(recall_items(result, params), (), max_bytes)
        out.append({
            "kind": r["kind"], "injected": context is not None,
            "evidence": evidence_in(context, r.get("evidence", []), covers) if r["kind"] == "answerable" else None,
        })  # fmt: skip
    return out


def rates(sim: list[dict[str, Any]]) -> dict[str, Any]:
    ans = [s for s in sim if s["kind"] == "answerable"]
    un = [s for s in sim if s["kind"] == "unanswerable"]
    return {
        "answerable": len(ans),
        "answerable_injected": round(sum(s["injected"] for s in ans) / len(ans), 3) if ans else None,
        "evidence_injected": round(sum(bool(s["evidence"]) for s in ans) / len(ans), 3) if ans else None,
        "unanswerable": len(un),
        "unanswerable_injected": round(sum(s["injected"] for s in un) / len(un), 3) if un else None,
    }


ENV_OF = {
    "need_threshold": "HIPPO_RECALL_NEED_THRESHOLD",
    "lexical_need_threshold": "HIPPO_RECALL_LEXICAL_NEED_THRESHOLD",
}
CHOICE_MAX_UNANSWERABLE = 0.025
"""Half the 5 % target on the set a bar is chosen on: a margin for the set it is reported on."""


def choose_params(
    rows: list[dict[str, Any]],
    covers: dict[str, set[str]],
    key: str,
    max_unanswerable: float = CHOICE_MAX_UNANSWERABLE,
) -> dict[str, float]:
    """The router's bar for one engine, chosen on these rows: the lowest (most injections) whose
    unanswerable injection is at most `max_unanswerable`."""
    from hippo_core.recall.route import RouteParams

    for bar in BARS:
        got = rates(simulate(rows, covers, key, RouteParams(**{BAR_FIELD[key]: bar})))
        if got["unanswerable_injected"] is not None and got["unanswerable_injected"] <= max_unanswerable:
            return {BAR_FIELD[key]: bar}
    return {BAR_FIELD[key]: BARS[-1]}


def hit_at3(rows: list[dict[str, Any]], covers: dict[str, set[str]], key: str = "hits") -> float:
    ans = [r for r in rows if r["kind"] == "answerable"]
    ok = sum(evidence_covered([h["anchor"] for h in r[key][:3]], r["evidence"], covers) for r in ans)
    return ok / len(ans) if ans else 0.0


# --- the run ------------------------------------------------------------------------------------------------
def measure(
    settings: Any,
    prompts: list[dict[str, Any]],
    covers: dict[str, set[str]],
    values: dict[str, float],
    with_librarian: bool,
    budget_ms: int = 1500,
) -> list[dict[str, Any]]:
    """Every prompt through `hippo hook claude-code` (a real process), with the router's `values` set as
    the hook reads them (HIPPO_RECALL_*)."""
    extra = {"HIPPO_RECALL_BUDGET_MS": str(budget_ms)} | {ENV_OF[k]: str(v) for k, v in values.items()}
    port = free_port()
    rows = []

    def go() -> None:
        env = hook_env(settings, port, extra)
        for p in prompts:
            context, elapsed = run_hook(env, p["prompt"])
            rows.append({
                "id": p["id"], "set": p["set"], "kind": p["kind"], "injected": context is not None,
                "bytes": len(context.encode()) if context else 0, "ms": round(1000 * elapsed, 1),
                "evidence": evidence_in(context, p.get("evidence", []), covers) if p["kind"] == "answerable" else None,
            })  # fmt: skip

    if with_librarian:
        with librarian(settings, port, extra):
            go()
    else:
        go()
    return rows


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind in ("answerable", "unanswerable"):
        rs = [r for r in rows if r["kind"] == kind]
        if not rs:
            continue
        inj = [r for r in rs if r["injected"]]
        out[kind] = {
            "prompts": len(rs),
            "injection_rate": round(len(inj) / len(rs), 3),
            "mean_bytes_injected": round(statistics.mean(r["bytes"] for r in inj), 1) if inj else 0,
        }
        if kind == "answerable":
            out[kind]["evidence_injected"] = round(sum(bool(r["evidence"]) for r in rs) / len(rs), 3)
    ms = [r["ms"] for r in rows]
    out["latency_ms"] = {
        "p50": round(pct(ms, 0.5), 1),
        "p95": round(pct(ms, 0.95), 1),
        "share_over_1500": round(sum(m > 1500 for m in ms) / len(ms), 3) if ms else 0,
    }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.recall_bench", description=__doc__.split("\n\n")[0])
    ap.add_argument("--locomo", type=Path, default=Path("../shared/eval-data/locomo-dev"))
    ap.add_argument("--lme", type=Path, required=True, help="the unpacked longmemeval-dev tarball")
    ap.add_argument(
        "--work", type=Path, default=Path("/tmp/recall-bench"), help="indexes (re-used when built)"
    )
    ap.add_argument("--conversations", default="conv-26")
    ap.add_argument("--lme-questions", type=int, default=3)
    ap.add_argument("--fillers", type=int, default=8, help="LongMemEval sessions kept besides the evidence")
    ap.add_argument(
        "--max-prompts",
        type=int,
        default=40,
        help="answerable prompts per set run through the hook process (and as many others); the router is "
        "scored offline on every prompt",
    )
    ap.add_argument("--no-librarian", action="store_true", help="skip the runs with a librarian")
    ap.add_argument(
        "--budget-ms",
        type=int,
        default=1500,
        help="the hook's budget in the runs with a librarian (raise it on a loaded machine to measure the decisions)",
    )
    ap.add_argument(
        "--local-budget-ms", type=int, default=1500, help="the hook's budget in the runs without a librarian"
    )
    ap.add_argument(
        "--latency-only",
        action="store_true",
        help="hook latency only (the shipped bars, no offline scoring): `--max-prompts` prompts per kind on the "
        "first index, with and without a librarian; written as recall_bench-latency",
    )
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)

    from eval.bench_locomo import evidence_covers

    sets: dict[str, list[tuple[Any, list[dict[str, Any]], dict[str, set[str]]]]] = {"locomo": [], "lme": []}
    generic = [
        {"id": f"generic-{i}", "kind": "unanswerable", "prompt": p} for i, p in enumerate(GENERIC_PROMPTS)
    ]
    for conv in args.conversations.split(","):
        settings = build_locomo(args.locomo, conv, args.work / "locomo")
        covers = invert(evidence_covers(settings)[0])
        sets["locomo"].append((settings, locomo_prompts(args.locomo, conv), covers))
    questions = lme_questions(args.lme)[: args.lme_questions]
    all_sessions = {q["qid"]: lme_sessions(args.lme, q["qid"]) for q in lme_questions(args.lme)}
    lme_fillers: list[str] = []
    for q in lme_questions(args.lme)[args.lme_questions :]:
        for sid, path in list(all_sessions[q["qid"]].items())[-3:]:
            if sid not in q["evidence_sessions"] and (turn := first_user_turn(path)):
                lme_fillers.append(turn[:2000])
    in_vault: list[str] = []
    for q in questions:
        settings = build_lme(args.lme, q["qid"], args.work / "lme-built", args.fillers)
        kept = lme_kept_sessions(q, all_sessions[q["qid"]], args.fillers)
        covers = {
            f"{q['qid']}:{s}": {f"60-chats/{all_sessions[q['qid']][s].name}"} for s in q["evidence_sessions"]
        }
        prompt = {
            "id": q["qid"],
            "set": "lme",
            "kind": "answerable",
            "prompt": q["question"],
            "evidence": [f"{q['qid']}:{s}" for s in q["evidence_sessions"]],
        }
        in_vault += [all_sessions[q["qid"]][s].read_text(encoding="utf-8") for s in kept]
        sets["lme"].append((settings, [prompt], covers))
    built_text = "\n".join(in_vault)
    lme_fillers = [t for t in lme_fillers if t[:200] not in built_text]  # shared filler sessions: not indexed
    # unanswerable prompts: generic ones and LongMemEval fillers (first user turns of haystacks not built),
    # asked of every index offline and of the first index of each set through the hook
    n_un = max(1, args.max_prompts)
    un_fillers = [
        {"id": f"filler-{i}", "kind": "unanswerable", "prompt": t} for i, t in enumerate(lme_fillers[:60])
    ]

    def batch(
        name: str, k: int, prompts: list[dict[str, Any]], answerable: int, others: int
    ) -> list[dict[str, Any]]:
        unanswerable = [*generic, *un_fillers[: max(0, others - len(generic))]] if k == 0 else []
        return [*prompts[:answerable], *[{**u, "set": name} for u in unanswerable[:others]]]

    report: dict[str, Any] = {
        "sets": {},
        # paths as the command names them, relative to the checkout (no machine path in committed results)
        "config": vars(args)
        | {k: relative_path(str(getattr(args, k))) for k in ("locomo", "lme", "work", "json")},
    }
    if args.latency_only:
        for name, items in sets.items():
            settings, prompts, covers = items[0]
            few = batch(name, 0, prompts, args.max_prompts, args.max_prompts)
            result = {
                "without_librarian": summarise(
                    measure(settings, few, covers, {}, False, args.local_budget_ms)
                ),
                "with_librarian": summarise(measure(settings, few, covers, {}, True, args.budget_ms)),
            }
            report["sets"][name] = result
            print(json.dumps({name: result}, indent=2), flush=True)
        from eval.results import write_result

        write_result("recall_bench-latency", report, argv, module="eval.recall_bench")
        return 0

    rows_by_set: dict[str, list[dict[str, Any]]] = {}
    covers_by_set: dict[str, dict[str, set[str]]] = {}
    for name, items in sets.items():
        rows: list[dict[str, Any]] = []
        merged: dict[str, set[str]] = {}
        for settings, prompts, covers in items:
            # offline, every index is asked every unanswerable prompt (cheap: candidate lists only)
            rows += candidates_for(
                settings, batch(name, 0, prompts, len(prompts), len(generic) + len(un_fillers))
            )
            merged |= covers
        rows_by_set[name], covers_by_set[name] = rows, merged
    other = {"locomo": "lme", "lme": "locomo"}
    # each set's router values are chosen on the other set only (leave one set out)
    chosen_by_set = {
        name: {
            key: choose_params(rows_by_set[other[name]], covers_by_set[other[name]], key) for key in BAR_FIELD
        }
        for name in sets
    }
    from hippo_core.recall.route import RouteParams

    per_index = max(1, args.max_prompts // max(1, len(sets["locomo"])))
    for name, items in sets.items():
        rows, covers = rows_by_set[name], covers_by_set[name]
        chosen = chosen_by_set[name]
        result: dict[str, Any] = {
            "chosen_on_the_other_set": chosen,
            "router_on_every_prompt": {
                "with_librarian": {
                    "search_hit_at_3": round(hit_at3(rows, covers, "hits"), 3),
                    **rates(simulate(rows, covers, "hits", RouteParams(**chosen["hits"]))),
                },
                "without_librarian": {
                    "search_hit_at_3": round(hit_at3(rows, covers, "lexical"), 3),
                    **rates(simulate(rows, covers, "lexical", RouteParams(**chosen["lexical"]))),
                },
            },
        }
        for mode in ("without_librarian", *(() if args.no_librarian else ("with_librarian",))):
            measured: list[dict[str, Any]] = []
            for k, (settings, prompts, covers) in enumerate(items):
                few = batch(name, k, prompts, per_index if name == "locomo" else 1, n_un)
                librarian_on = mode == "with_librarian"
                budget = args.budget_ms if librarian_on else args.local_budget_ms
                values = chosen["hits"] | chosen["lexical"]
                measured += measure(settings, few, covers, values, librarian_on, budget)
            result[f"hook_{mode}"] = summarise(measured)
        report["sets"][name] = result
        print(json.dumps({name: result}, indent=2), flush=True)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, default=str), encoding="utf-8")
    from eval.results import write_result

    write_result("recall_bench", report, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
