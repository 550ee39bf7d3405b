"""Search that knows time, on LongMemEval-S's knowledge-update (KU) and temporal-reasoning (TR) questions.

    python -m eval.temporal DIR --mode lexical|semantic|hybrid --out RUN.jsonl [--max-questions N] [--qids FILE]

DIR is the unpacked `longmemeval-dev` set (its README defines the layout and the metrics). Each question's
folder `vault/<qid>/` is indexed alone through the product's index assets (`vault_documents`, `chunks`,
`embeddings`, `lexical_index`: what `hippo run` materializes; `lexical` mode skips `embeddings`, so
nothing is embedded) into `--work/<qid>/`, kept between runs and modes (a second mode re-embeds nothing).
Each question is asked with the product's search at its `now` and every KU question also at `ku.as_of`;
RUN.jsonl gets one line per question and probe: {"qid", "probe": "now"|"asof", "ranked": [...]} with
`<path>#<heading>` anchors relative to DIR.

`--reuse-hits RUN.hits.jsonl` re-ranks an earlier run's hits (what each search returned with the stage
off, written beside --out) without indexing or searching again.

`--qids FILE` asks only the questions listed (one id a line): a sample, for the modes that embed. Hybrid
indexing takes ~3 min a question on 2 cores (~950 chunks each), so the 97 take ~5 h, more than a working
session; `eval/samples/temporal_hybrid.txt` lists the sample the committed hybrid figures are from.

The time stages' parameters (RankingParams): `time_ref_boost` (4a, a question that names its time lifts
the best sources dated then), `time_ref_slots`, `time_window`, `time_depth`, `time_past_cues` and
`time_coverage_share` and `time_by_day` (4c, newest first). Besides the
figures at the product's values, the report gives a 2-fold estimate: the questions are split by index
(even, odd within each type); the six are chosen on one half from `CHOICES` (by `objective`) and the
other half is scored with them. Each question is searched once per `REFS` pair with 4c off; 4c is the
pipeline's last stage, so each (window, depth, gate)'s order is computed from those hits (`ordered`).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eval.results import write_result
from hippo_core.ranking.time import DAY_END, about_the_past, newest_first, time_reference

GRID = (0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.01)
"""Windows tried by the 2-fold estimate (1.01: the newest-first stage off)."""
DEPTHS = (3, 5, 10)
"""`time_depth` values tried (how many top results newest first may reorder)."""
REFS = ((0.0, 0), (0.5, 1), (1.0, 1), (3.0, 1), (0.5, 2), (1.0, 2), (3.0, 2))
"""(`time_ref_boost`, `time_ref_slots`) pairs tried ((0, 0): stage 4a off); each is one search per question
and probe."""
SHARES = (0.0, 0.5, 0.6, 0.65, 0.7, 0.8, 1.0)
"""`time_coverage_share` values tried (0: any coverage; 1: the newer covers as many of the question's terms)."""
CHOICES = [
    (r, w, d, c, s, b)
    for r in REFS
    for w in GRID
    for d in DEPTHS
    for c in (True, False)
    for s in SHARES
    for b in (False, True)
]
"""((time_ref_boost, time_ref_slots), time_window, time_depth, time_past_cues, time_coverage_share,
time_by_day) the 2-fold estimate chooses from."""
DEFAULT_WORK = Path("~/.cache/hippocampus/temporal")
DEFAULT_CACHE = Path("~/.cache/hippocampus/bench-embed.sqlite")
LIMIT = 10


def load(folder: Path) -> tuple[list[dict[str, Any]], dict[tuple[str, str], str]]:
    """Scored questions (abstentions left out, as the README says) and each (qid, session)'s datetime."""
    questions = [
        q
        for q in map(json.loads, (folder / "questions.jsonl").read_text(encoding="utf-8").splitlines())
        if not q["abstention"]
    ]
    sessions = {
        (s["qid"], s["session"]): s["datetime"]
        for s in map(json.loads, (folder / "sessions.jsonl").read_text(encoding="utf-8").splitlines())
    }
    return questions, sessions


def index(notes: Path, home: Path, mode: str, cache: Path) -> Any:
    """Index one question's notes with the product's index assets; returns its HippoSettings. The notes
    are copied to the root of a vault `hippo init` made under `home` (DIR is only read)."""
    from dagster import DagsterInstance, materialize

    from hippo_assets.index.assets import chunks, embeddings, lexical_index, vault_documents
    from hippo_cli.vault_init import init_vault
    from hippo_resources import build_resources
    from hippo_settings import HippoSettings

    vault = home / "vault"
    if not vault.exists():
        init_vault(vault)
        for note in sorted(notes.glob("*.md")):
            shutil.copy2(note, vault / note.name)
    settings = HippoSettings(vault=vault, home=home, embed_cache_path=cache.expanduser())
    resources = build_resources(settings)
    assets = [vault_documents, chunks, lexical_index]
    if mode != "lexical":
        assets.insert(2, embeddings)
    result = materialize(assets, resources=resources, instance=DagsterInstance.ephemeral())
    if not result.success:
        raise RuntimeError(f"indexing {vault} failed")
    return settings


def probes(q: dict[str, Any]) -> list[tuple[str, str]]:
    """(probe, as_of) pairs: every question at its `now`, a KU question also at `ku.as_of`."""
    out = [("now", q["now"])]
    if q["question_type"] == "knowledge-update":
        out.append(("asof", q["ku"]["as_of"]))
    return out


def ask(
    engine: Any, q: dict[str, Any], as_of: str, mode: str, ref: tuple[float, int]
) -> list[dict[str, Any]]:
    """The search's hits with stage 4a at `ref` (boost, slots) and 4c off, with score and date."""
    from hippo_search.envelope import SearchRequest

    update = {"time_window": GRID[-1], "time_ref_boost": ref[0], "time_ref_slots": ref[1]}
    off = engine.params.model_copy(update=update)
    response = engine.search(
        SearchRequest(query=q["question"][:900], limit=LIMIT, mode=mode, as_of=as_of), params=off, log=False
    )
    return [
        {"anchor": h.anchor, "score": h.score, "date": h.date, "coverage": h.coverage}
        for h in response.results
    ]


def ordered(
    hits: list[dict[str, Any]],
    window: float,
    query: str,
    cues: bool = True,
    depth: int = 10,
    named: bool = False,
    share: float = 0.0,
    by_day: bool = False,
) -> list[dict[str, Any]]:
    """The pipeline's time stage (`time_stage`) at `window` over the top `depth` of one search's hits
    (`cues`: the question-about-the-past gate, `time_past_cues`; `named`: the question names its time and
    4a was on, so 4c leaves the order; `share`: `time_coverage_share`; `by_day`: `time_by_day`). Every hit here is a note (lane `notes`, one of TIME_LANES) and
    each its own source, as in the pipeline."""
    if named or (cues and about_the_past(query)):
        return hits
    head = hits[:depth]
    order = newest_first(
        [h["score"] for h in head],
        [h["date"] for h in head],
        window,
        [h["anchor"].split("#", 1)[0] for h in head],
        [h.get("coverage", 0.0) for h in head],
        share,
        by_day,
    )
    return [head[i] for i in order] + hits[depth:]


def names_time(q: dict[str, Any], as_of: str) -> bool:
    """Whether the question names a time relative to when it is asked (what makes 4a act and 4c pass)."""
    bound = as_of if "T" in as_of else as_of + DAY_END
    return time_reference(q["question"][:900], bound) is not None


def session_of(anchor: str) -> str:
    """`2023-08-11-s01.md#Turn 07 - user` → `s01`."""
    return anchor.split("#", 1)[0].rsplit("-", 1)[-1].removesuffix(".md")


def ranks(ranked: Sequence[str]) -> dict[str, int]:
    """Each session's best rank (1-based) in a ranked list of anchors."""
    out: dict[str, int] = {}
    for i, anchor in enumerate(ranked, 1):
        out.setdefault(session_of(anchor), i)
    return out


def question_scores(
    q: dict[str, Any], runs: dict[str, list[str]], dates: dict[tuple[str, str], str]
) -> dict[str, float]:
    """The README's metrics for one question (0/1 each), from its probes' ranked anchors."""
    now = ranks(runs["now"])
    evidence = q["evidence_sessions"]
    found = [now[s] for s in evidence if s in now]
    out = {
        "hit@1": float(any(r <= 1 for r in found)),
        "hit@5": float(any(r <= 5 for r in found)),
        "hit@10": float(any(r <= 10 for r in found)),
        "all@10": float(len(found) == len(evidence) and all(r <= 10 for r in found)),
    }
    if q["question_type"] != "knowledge-update":
        return out
    ku = q["ku"]
    latest = now.get(ku["latest"])
    stale = min((now[s] for s in ku["superseded"] if s in now), default=None)
    out["current_first"] = float(latest is not None and (stale is None or latest < stale))
    out["latest@1"] = float(latest == 1)
    out["stale_only@5"] = float(stale is not None and stale <= 5 and (latest is None or latest > 5))
    asof = ranks(runs["asof"])
    out["asof_hit@1"] = float(any(asof.get(s) == 1 for s in ku["superseded"]))
    out["leak@10"] = float(
        any(dates[(q["qid"], s)] > ku["as_of"] for s, r in asof.items() if r <= 10 and (q["qid"], s) in dates)
    )
    return out


KU_METRICS = ("hit@1", "hit@10", "current_first", "latest@1", "stale_only@5", "asof_hit@1", "leak@10")
TR_METRICS = ("hit@1", "hit@5", "all@10")


def summary(scored: list[tuple[dict[str, Any], dict[str, float]]]) -> dict[str, dict[str, float]]:
    """Means per question type, over the questions given."""
    out: dict[str, dict[str, float]] = {}
    for kind, names in (("knowledge-update", KU_METRICS), ("temporal-reasoning", TR_METRICS)):
        rows = [s for q, s in scored if q["question_type"] == kind]
        if rows:
            out[kind] = {"n": len(rows), **{m: round(sum(r[m] for r in rows) / len(rows), 4) for m in names}}
    return out


def objective(figures: dict[str, dict[str, float]]) -> float:
    """What the parameters are chosen for: the current value first (now and as of), no evidence lost (TR),
    and, a tenth as much, the first result being evidence (hit@1 of both types: among settings that meet
    the rest alike, the one that moves an unrelated newer session to the top least)."""
    ku = figures.get("knowledge-update", {})
    tr = figures.get("temporal-reasoning", {})
    return (
        ku.get("current_first", 0)
        + ku.get("asof_hit@1", 0)
        - ku.get("stale_only@5", 0)
        + tr.get("hit@5", 0)
        + tr.get("all@10", 0)
        + 0.1 * (ku.get("hit@1", 0) + tr.get("hit@1", 0))
    )


Ref = tuple[float, int]
Hits = dict[tuple[Ref, str, str], list[dict[str, Any]]]
"""One search's hits per ((time_ref_boost, time_ref_slots), qid, probe)."""


def score_at(
    questions: list[dict[str, Any]],
    hits: Hits,
    dates: dict[tuple[str, str], str],
    ref: Ref,
    window: float,
    depth: int = 10,
    cues: bool = True,
    share: float = 0.0,
    by_day: bool = False,
) -> list[tuple[dict[str, Any], dict[str, float]]]:
    out = []
    for q in questions:
        runs = {
            p: [
                h["anchor"]
                for h in ordered(
                    hits[(ref, q["qid"], p)],
                    window,
                    q["question"],
                    cues,
                    depth,
                    min(ref) > 0 and names_time(q, as_of),
                    share,
                    by_day,
                )
            ]
            for p, as_of in probes(q)
        }
        out.append((q, question_scores(q, runs, dates)))
    return out


def two_fold(
    questions: list[dict[str, Any]],
    hits: Hits,
    dates: dict[tuple[str, str], str],
) -> dict[str, Any]:
    """The time parameters (`CHOICES`) chosen on each half (even / odd index within each type), scored on
    the other half."""
    halves: list[list[dict[str, Any]]] = [[], []]
    seen: dict[str, int] = {}
    for q in questions:
        k = seen.get(q["question_type"], 0)
        halves[k % 2].append(q)
        seen[q["question_type"]] = k + 1
    left_out: list[tuple[dict[str, Any], dict[str, float]]] = []
    folds = []
    for train, test in ((halves[0], halves[1]), (halves[1], halves[0])):
        # best objective; on a tie the smaller boost, the larger window, the smaller depth and the larger
        # share, by day (the smaller change to relevance order), gate on
        ref, window, depth, gate, share, by_day = max(
            CHOICES,
            key=lambda c: (
                objective(summary(score_at(train, hits, dates, *c))),
                -c[0][1],
                -c[0][0],
                c[1],
                -c[2],
                c[3],
                c[4],
                c[5],
            ),
        )
        scored = score_at(test, hits, dates, ref, window, depth, gate, share, by_day)
        left_out += scored
        folds.append(
            {
                "ref_boost": ref[0],
                "ref_slots": ref[1],
                "window": window,
                "depth": depth,
                "past_cues": gate,
                "coverage_share": share,
                "by_day": by_day,
                "in_sample": summary(score_at(train, hits, dates, ref, window, depth, gate, share, by_day)),
                "left_out": summary(scored),
            }
        )
    return {"folds": folds, "left_out": summary(left_out)}


def run(
    folder: Path,
    mode: str,
    out: Path,
    max_questions: int | None,
    work: Path,
    cache: Path,
    reuse: Path | None = None,
    qids: list[str] | None = None,
) -> dict[str, Any]:
    from hippo_core.ranking.ranking import RankingParams
    from hippo_search.pipeline import open_engine

    questions, dates = load(folder)
    if qids is not None:  # a sample (`--qids FILE`), in the set's order
        wanted = set(qids)
        questions = [q for q in questions if q["qid"] in wanted]
    if max_questions:
        questions = questions[:max_questions]
    hits: Hits = {}
    defaults = RankingParams()
    product: tuple[Ref, float, int, bool, float, bool] = (
        (defaults.time_ref_boost, defaults.time_ref_slots),
        defaults.time_window,
        defaults.time_depth,
        defaults.time_past_cues,
        defaults.time_coverage_share,
        defaults.time_by_day,
    )
    index_s = search_s = 0.0
    if reuse is not None:  # the hits of an earlier run (`--reuse-hits`): the time stage again, no search
        for line in reuse.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            hits[((row["boost"], row["slots"]), row["qid"], row["probe"])] = row["hits"]
        questions = [q for q in questions if (REFS[0], q["qid"], "now") in hits]
    for n, q in enumerate([] if reuse is not None else questions, 1):
        started = time.monotonic()
        settings = index(folder / q["vault_dir"], work.expanduser() / q["qid"], mode, cache)
        index_s += time.monotonic() - started
        engine = open_engine(settings, log=False)
        p = engine.params
        product = (
            (p.time_ref_boost, p.time_ref_slots),
            p.time_window,
            p.time_depth,
            p.time_past_cues,
            p.time_coverage_share,
            p.time_by_day,
        )
        started = time.monotonic()
        prefix = q["vault_dir"].rstrip("/") + "/"
        for ref in dict.fromkeys((*REFS, product[0])):
            for probe, as_of in probes(q):
                found = ask(engine, q, as_of, mode, ref)
                hits[(ref, q["qid"], probe)] = [{**h, "anchor": prefix + h["anchor"]} for h in found]
        search_s += time.monotonic() - started
        print(f"[{n}/{len(questions)}] {q['qid']} indexed and asked", file=sys.stderr, flush=True)
    if reuse is None:
        with out.with_suffix(".hits.jsonl").open("w", encoding="utf-8") as fh:
            for ((boost, slots), qid, probe), found in hits.items():
                row = {"boost": boost, "slots": slots, "qid": qid, "probe": probe, "hits": found}
                fh.write(json.dumps(row) + "\n")
    ref, window, depth, cues, share, by_day = product
    with out.open("w", encoding="utf-8") as fh:
        for q in questions:
            for probe, as_of in probes(q):
                named = min(ref) > 0 and names_time(q, as_of)
                found = ordered(
                    hits[(ref, q["qid"], probe)], window, q["question"], cues, depth, named, share, by_day
                )
                fh.write(
                    json.dumps({"qid": q["qid"], "probe": probe, "ranked": [h["anchor"] for h in found]})
                    + "\n"
                )
    report = {
        "dataset": folder.name,
        "mode": mode,
        "questions": len(questions),
        "sample": None if qids is None else f"{len(questions)} questions listed in the --qids file",
        "time_ref_boost": ref[0],
        "time_ref_slots": ref[1],
        "time_window": window,
        "time_depth": depth,
        "time_past_cues": cues,
        "time_coverage_share": share,
        "time_by_day": by_day,
        "product": summary(score_at(questions, hits, dates, ref, window, depth, cues, share, by_day)),
        "product_other_gate": summary(
            score_at(questions, hits, dates, ref, window, depth, not cues, share, by_day)
        ),
        "product_no_coverage": summary(
            score_at(questions, hits, dates, ref, window, depth, cues, 0.0, by_day)
        ),
        "product_other_day": summary(
            score_at(questions, hits, dates, ref, window, depth, cues, share, not by_day)
        ),
        "newest_first_off": summary(score_at(questions, hits, dates, ref, GRID[-1])),
        "time_reference_off": summary(
            score_at(questions, hits, dates, REFS[0], window, depth, cues, share, by_day)
        ),
        "time_stages_off": summary(score_at(questions, hits, dates, REFS[0], GRID[-1])),
        "two_fold": two_fold(questions, hits, dates),
        "index_seconds": round(index_s, 1),
        "search_seconds": round(search_s, 1),
    }
    return report


def render(report: dict[str, Any]) -> str:
    def row(label: str, figures: dict[str, dict[str, float]]) -> str:
        ku = figures.get("knowledge-update", {})
        tr = figures.get("temporal-reasoning", {})
        cells = [ku.get(m) for m in KU_METRICS] + [tr.get(m) for m in TR_METRICS]
        return f"| {label} | " + " | ".join("–" if c is None else f"{c:.3f}" for c in cells) + " |"

    def chosen(f: dict[str, Any]) -> str:
        gate = "on" if f["past_cues"] else "off"
        cover = f.get("coverage_share", 0.0)
        return (
            f"boost {f['ref_boost']} × {f['ref_slots']}, window {f['window']}, depth {f['depth']}, gate {gate}, "
            f"coverage {cover}, by day {'on' if f.get('by_day') else 'off'}"
        )

    product = {
        "ref_boost": report["time_ref_boost"],
        "ref_slots": report["time_ref_slots"],
        "window": report["time_window"],
        "depth": report["time_depth"],
        "past_cues": report["time_past_cues"],
        "coverage_share": report["time_coverage_share"],
        "by_day": report["time_by_day"],
    }
    lines = [
        f"LongMemEval-S temporal ({report['dataset']}, mode {report['mode']}, {report['questions']} questions)",
        "",
        "| ranking | KU hit@1 | KU hit@10 | current_first | latest@1 | stale_only@5 | asof_hit@1 | leak@10 "
        "| TR hit@1 | TR hit@5 | TR all@10 |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        row("time stages off (4a, 4c)", report["time_stages_off"]),
        row("4a only (named time)", report["newest_first_off"]),
        row("4c only (newest first)", report["time_reference_off"]),
        row(f"product ({chosen(product)}; in-sample)", report["product"]),
        row("product, the gate the other way", report["product_other_gate"]),
        row("product without the coverage condition", report["product_no_coverage"]),
        row("product, by day the other way", report["product_other_day"]),
    ]
    for i, fold in enumerate(report["two_fold"]["folds"]):
        lines.append(row(f"fold {i}: {chosen(fold)} chosen on its half", fold["in_sample"]))
        lines.append(row(f"fold {i}: the same on the other half", fold["left_out"]))
    lines.append(row("2-fold left-out (every question)", report["two_fold"]["left_out"]))
    lines += ["", f"Index {report['index_seconds']} s, search {report['search_seconds']} s."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.temporal", description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--mode", choices=("lexical", "semantic", "hybrid"), default="hybrid")
    parser.add_argument("--out", type=Path, required=True, help="ranked lists, one JSON line per probe")
    parser.add_argument("--max-questions", type=int)
    parser.add_argument(
        "--qids", type=Path, help="a sample: a file of question ids, one a line (# starts a comment)"
    )
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK, help="per-question index homes (kept)")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="embedding cache")
    parser.add_argument("--json", type=Path, help="the report as JSON (default: beside --out)")
    parser.add_argument(
        "--reuse-hits",
        type=Path,
        help="RUN.hits.jsonl of an earlier run (written beside --out): re-rank its hits, search nothing",
    )
    args = parser.parse_args(argv)
    if not (args.folder / "questions.jsonl").is_file():
        print(f"eval.temporal: no questions.jsonl in {args.folder}", file=sys.stderr)
        return 2
    qids = None
    if args.qids is not None:
        lines = args.qids.read_text(encoding="utf-8").splitlines()
        qids = [line.split("#", 1)[0].strip() for line in lines if line.split("#", 1)[0].strip()]
    report = run(
        args.folder, args.mode, args.out, args.max_questions, args.work, args.cache, args.reuse_hits, qids
    )
    print(render(report))
    target = args.json or args.out.with_suffix(".report.json")
    target.write_text(json.dumps(report, indent=2), encoding="utf-8")
    if not args.max_questions:  # the committed figures are whole-set runs only
        write_result(f"temporal_{args.mode}", report, argv, module="eval.temporal")
    return 0


if __name__ == "__main__":
    sys.exit(main())
