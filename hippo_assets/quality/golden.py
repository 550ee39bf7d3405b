"""The golden set: queries over a vault with the documents (and sections) that answer them.

`validate` checks the set against the vault before any search (ids, paths, anchors, scopes);
`build_throwaway_stores` materializes a copy of the vault in this process; `evaluate` runs the set
through the search pipeline and reports Hit@1/3/10, MRR@10 and nDCG@10, overall and per category, with a
dataset fingerprint (what was measured) and a run signature (what measured it). `run_golden` is all of
it, for `hippo eval run` (also `python -m eval run` in a checkout) and the `eval_report` asset alike.

Product code: it lives beside the asset that runs it and imports no benchmark (`eval/` imports it, never
the other way round). The throwaway stores are built from the ingest and index domains' own graph, not the
root Definitions (which would import this module back).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from hippo_assets.quality.metrics import hit_at_k, ndcg_at_k, reciprocal_rank
from hippo_core.index.chunking import anchor_for, split_sections
from hippo_core.ranking.ranking import RankingParams
from hippo_core.safety.text_input import BadTextError, decode_utf8
from hippo_core.vault import frontmatter
from hippo_core.vault.fingerprints import sha256_text
from hippo_core.vault.vault_layout import LANES, is_indexed
from hippo_resources import Embedder, HippoResources, build_resources
from hippo_search.envelope import SearchRequest
from hippo_search.pipeline import SearchEngine, engine_from_resources
from hippo_settings import HippoSettings

Category = Literal["lexical", "semantic", "hybrid", "cross-lingual", "alias", "feedback", "answered-gap"]
GOLDEN_METRICS = ("hit@1", "hit@3", "hit@10", "mrr@10", "ndcg@10")
DEFAULT_GOLDEN = Path(__file__).with_name("golden.jsonl")
CHECKOUT = Path(__file__).resolve().parents[2]
DEFAULT_VAULT = CHECKOUT / "examples" / "vault"  # what golden.jsonl is written for


class GoldenItem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    query: str
    expected: list[str]
    anchors: list[str] = []
    category: Category
    lang: Literal["ko", "en"]
    lanes: list[str] | None = None
    path_prefix: str | None = None


class GoldenError(ValueError):
    """The golden set cannot be measured; every problem is listed."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def load_golden(path: Path) -> list[GoldenItem]:
    items: list[GoldenItem] = []
    problems: list[str] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise GoldenError([f"{path}: cannot read: {exc}"]) from None
    for no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            items.append(GoldenItem.model_validate(json.loads(line)))
        except (json.JSONDecodeError, ValidationError) as exc:
            problems.append(f"{path.name}:{no}: {str(exc).splitlines()[0]}")
    if problems:
        raise GoldenError(problems)
    return items


def vault_documents(vault: Path) -> dict[str, tuple[str, list[str], str]]:
    """path → (status, section anchors, body hash) for every indexable document."""
    docs = {}
    for p in sorted(vault.rglob("*.md")):
        rel = p.relative_to(vault).as_posix()
        if not is_indexed(rel):
            continue
        try:
            fm, body = frontmatter.parse(decode_utf8(p.read_bytes(), rel), rel)
        except (BadTextError, frontmatter.FrontmatterError):
            continue
        anchors = [anchor_for(rel, s.heading) for s in split_sections(body)]
        docs[rel] = (fm.status, anchors, sha256_text(body))
    return docs


def validate(
    items: list[GoldenItem], vault: Path, docs: dict[str, tuple[str, list[str], str]] | None = None
) -> list[str]:
    """Every problem that would make a metric meaningless: found before any search runs."""
    problems: list[str] = []
    docs = vault_documents(vault) if docs is None else docs
    seen: set[str] = set()
    for item in items:
        where = f"{item.id}"
        if item.id in seen:
            problems.append(f"{where}: duplicate id")
        seen.add(item.id)
        if not item.query.strip():
            problems.append(f"{where}: empty query")
        if not item.expected:
            problems.append(f"{where}: no expected document")
        for path in item.expected:
            if path not in docs:
                problems.append(
                    f"{where}: expected document {path!r} is not an indexed document of the vault"
                )
            elif docs[path][0] == "archived":
                problems.append(f"{where}: expected document {path!r} is archived (search never returns it)")
        for anchor in item.anchors:
            path = anchor.split("#", 1)[0]
            if path not in item.expected:
                problems.append(f"{where}: anchor {anchor!r} is not in an expected document")
            elif path in docs and anchor not in docs[path][1]:
                problems.append(f"{where}: anchor {anchor!r} names no heading of {path}")
        if item.lanes and set(item.lanes) - set(LANES):
            problems.append(f"{where}: unknown lane(s) {sorted(set(item.lanes) - set(LANES))}")
        if item.path_prefix:
            outside = [p for p in item.expected if not p.startswith(item.path_prefix.rstrip("/") + "/")]
            if outside:
                problems.append(f"{where}: expected {outside} lie outside path_prefix {item.path_prefix!r}")
    return problems


def dataset_fingerprint(items: list[GoldenItem], vault: Path) -> str:
    """What was measured: the labels and every indexed document's path and content."""
    h = hashlib.sha256()
    for item in sorted(items, key=lambda i: i.id):
        h.update(item.model_dump_json().encode())
    for path, (status, _, body_hash) in sorted(vault_documents(vault).items()):
        h.update(f"{path}\x00{status}\x00{body_hash}\n".encode())
    return h.hexdigest()[:16]


def code_version() -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(CHECKOUT), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        from importlib.metadata import version

        return version("hippocampus")


def run_signature(engine: SearchEngine, params: RankingParams) -> dict[str, str]:
    """What measured it: code version, embedding model, ranking parameters."""
    params_json = params.model_dump_json()
    return {
        "code_version": code_version(),
        "embed_model": engine.embedder.model_id,
        "calibration": engine.calibration_status,
        "ranking": hashlib.sha256(params_json.encode()).hexdigest()[:12],
        "python": sys.version.split()[0],
    }


def evaluate(
    engine: SearchEngine, items: list[GoldenItem], params: RankingParams | None = None
) -> dict[str, Any]:
    """Run every query (document-level relevance; section-level hit@1 reported too)."""
    params = params or engine.params
    per_query = []
    for item in items:
        request = SearchRequest(query=item.query, limit=10, lanes=item.lanes, path_prefix=item.path_prefix)
        response = engine.search(request, params=params, log=False)
        docs: list[str] = []
        for hit in response.results:
            if hit.path not in docs:
                docs.append(hit.path)
        relevant = set(item.expected)
        per_query.append(
            {
                "id": item.id,
                "category": item.category,
                "lang": item.lang,
                "hit@1": hit_at_k(docs, relevant, 1),
                "hit@3": hit_at_k(docs, relevant, 3),
                "hit@10": hit_at_k(docs, relevant, 10),
                "mrr@10": reciprocal_rank(docs, relevant, 10),
                "ndcg@10": ndcg_at_k(docs, relevant, 10),
                "section@1": float(
                    bool(item.anchors)
                    and bool(response.results)
                    and response.results[0].anchor in item.anchors
                ),
                "top": docs[:3],
            }
        )
    return {
        "overall": _mean(per_query),
        "by_category": _grouped(per_query, "category"),
        "by_lang": _grouped(per_query, "lang"),
        "queries": per_query,
    }


def _mean(rows: list[dict[str, Any]]) -> dict[str, float]:
    keys = (*GOLDEN_METRICS, "section@1")
    return {k: round(sum(r[k] for r in rows) / len(rows), 4) if rows else 0.0 for k in keys} | {
        "n": len(rows)
    }


def _grouped(rows: list[dict[str, Any]], key: str) -> dict[str, dict[str, float]]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[r[key]].append(r)
    return {k: _mean(v) for k, v in sorted(groups.items())}


def _lang(text: str) -> Literal["ko", "en"]:
    return "ko" if any("\uac00" <= c <= "\ud7a3" for c in text) else "en"


def own_vault_items(
    golden: list[GoldenItem],
    vault: Path,
    feedback: list[dict[str, Any]],
    answered_gaps: list[dict[str, Any]],
) -> tuple[list[GoldenItem], dict[str, int]]:
    """The questions a person's own vault can be measured on: the golden items that validate against it,
    each question judged useful in feedback (its useful anchors' documents expected), and each answered
    gap (the section that answered it expected). Feedback or gaps naming a document the vault no longer
    indexes are left out. Returns the items and how many came from each source."""
    docs = vault_documents(vault)
    applies = [item for item in golden if not validate([item], vault, docs)]
    useful: dict[str, set[str]] = defaultdict(set)
    for row in feedback:
        if row.get("useful"):
            useful[str(row["query"])].add(str(row["anchor"]))
    items = list(applies)
    n_feedback = 0
    for query, anchors in sorted(useful.items()):
        expected = sorted({a.split("#", 1)[0] for a in anchors} & set(docs))
        if query.strip() and expected:
            n_feedback += 1
            items.append(
                GoldenItem(
                    id=f"feedback-{n_feedback:03d}",
                    query=query,
                    expected=expected,
                    category="feedback",
                    lang=_lang(query),
                )
            )
    n_gaps = 0
    for gap in answered_gaps:
        path = str(gap.get("answered_by") or "").split("#", 1)[0]
        if str(gap.get("query", "")).strip() and path in docs:
            n_gaps += 1
            items.append(
                GoldenItem(
                    id=f"gap-{n_gaps:03d}",
                    query=str(gap["query"]),
                    expected=[path],
                    category="answered-gap",
                    lang=_lang(str(gap["query"])),
                )
            )
    return items, {"golden": len(applies), "feedback": n_feedback, "answered_gaps": n_gaps}


def build_throwaway_stores(vault: Path, workdir: Path, embedder: Embedder) -> HippoResources:
    """Copy the vault and materialize `refresh_job`'s graph on it into `workdir`, in this process, with the
    caller's embedder (its cache makes this cost seconds; its calibration is the one applied): the user's
    stores and ledger are never touched by an evaluation."""
    from dagster import DagsterInstance, materialize

    from hippo_assets.index import definitions as index_defs
    from hippo_assets.ingest import definitions as ingest_defs

    copy = workdir / "vault"
    shutil.copytree(vault, copy, ignore=shutil.ignore_patterns(".git"))
    resources = dataclasses.replace(
        build_resources(HippoSettings(vault=copy, home=workdir / "home")), embedder=embedder
    )
    result = materialize(
        [*ingest_defs.ASSETS, *index_defs.ASSETS, *ingest_defs.CHECKS, *index_defs.CHECKS],
        resources=dict(resources),
        instance=DagsterInstance.ephemeral(),
        run_config={"loggers": {"console": {"config": {"log_level": "WARNING"}}}},  # a build, not news
        raise_on_error=False,
    )
    if not result.success:
        failed = [e.message for e in result.all_events if e.is_failure][-3:]
        raise RuntimeError("building the evaluation stores failed: " + " | ".join(str(m) for m in failed))
    return resources


def throwaway_engine(resources: HippoResources) -> SearchEngine:
    """The pipeline over throwaway stores; no ledger, so nothing is logged as a person's query. With the
    chunk store, as the librarian: the semantic hits are checked against the vector ledger."""
    return engine_from_resources(
        resources.lexical_store,
        resources.vector_store,
        resources.embedder,
        resources.vault,
        chunk_store=resources.chunk_store,
    )


def run_golden(
    golden: Path, vault: Path, embedder: Embedder, overrides: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The golden-set report: validate, build throwaway stores, measure. Raises GoldenError when the set
    does not validate against the vault (no metric is measured then)."""
    items = load_golden(golden)
    problems = validate(items, vault)
    if problems:
        raise GoldenError(problems)
    with tempfile.TemporaryDirectory(prefix="hippo-eval-") as tmp:
        engine = throwaway_engine(build_throwaway_stores(vault, Path(tmp), embedder))
        params = engine.params.model_copy(update=overrides) if overrides else engine.params
        report = {
            "dataset_fingerprint": dataset_fingerprint(items, vault),
            "run_signature": run_signature(engine, params),
            "ranking_params": params.model_dump(mode="json"),
            **evaluate(engine, items, params),
        }
        engine.vector_store.forget_clients()  # release Chroma's client before its folder goes
    return report
