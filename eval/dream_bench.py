"""`python -m eval.dream_bench [--notes 10000] [--work DIR]`: the dream's layer-1 and layer-2 lint on a
generated vault with planted defects of every kind, and on a clean copy of the same vault.

The vault: `--notes` linked wiki notes (each links to the next two, with a `#heading` anchor now and then),
sources, attachments and index pages. Planted: orphans, broken links, broken anchors, malformed
frontmatter, exact duplicates, future dates in notes; and as fact rows: two active values, sources gone
and archived, volatile facts not reconfirmed, overdue reviews, future fact dates, facts without
provenance. Reported: planted defects found (recall, per rule), findings on the clean copy (must be 0),
and the time of a cold lint (every note read), a warm one (nothing changed) and one after 50 edits — all
through the product path (`read_vault` over the Vault resource and the DreamStore, then the rules).
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

from eval.results import write_result
from hippo_assets.dream.assets import read_vault
from hippo_cli.vault_init import init_vault
from hippo_core.dream.lint import (
    FactView,
    PendingReview,
    lint_facts_structure,
    lint_grounding,
    lint_structure,
)
from hippo_resources import Vault
from hippo_resources.dream_store import DreamStore

TODAY = date(2026, 12, 7)
SECTORS = ["health", "data", "tools", "people", "places", "reading", "work", "home"]


def note_path(i: int) -> str:
    return f"20-wiki/{SECTORS[i % len(SECTORS)]}/note-{i:05d}.md"


def note_text(i: int, n: int, rng: random.Random) -> str:
    a, b = (i + 1) % n, (i + 2) % n
    anchor = "#Details" if rng.random() < 0.2 else ""
    created = (TODAY - timedelta(days=rng.randrange(1, 900))).isoformat()
    return (
        f"---\ntitle: Note {i}\ncreated: {created}\ntags: [{SECTORS[i % len(SECTORS)]}]\n---\n"
        f"# Note {i}\n\nA note about topic {i}, written to be linked. See [[note-{a:05d}{anchor}]] and "
        f"[[{note_path(b)[:-3]}|the one after]].\n\n## Details\n\nMore on topic {i}: {rng.random():.6f}.\n"
        + ("\n![[diagram.png]]\n" if i % 97 == 0 else "")
    )


def build(root: Path, n: int, seed: int) -> Path:
    """A clean vault of `n` linked notes (git-initialised by `hippo init`)."""
    rng = random.Random(seed)
    vault = root / "vault"
    init_vault(vault)
    for i in range(n):
        p = vault / note_path(i)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(note_text(i, n, rng), encoding="utf-8")
    (vault / "assets").mkdir(exist_ok=True)
    (vault / "assets" / "diagram.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    for k in range(n // 50):
        (vault / "10-sources" / f"2026-01-01-source-{k:04d}.md").write_text(
            f"# Source {k}\n\nRaw text {k}.\n"
        )
    return vault


def plant(vault: Path, n: int, per_rule: int) -> dict[str, set[str]]:
    """Plant `per_rule` defects of each note-level kind; returns rule -> the paths it must name."""
    planted: dict[str, set[str]] = {
        r: set()
        for r in (
            "orphan",
            "broken_link",
            "broken_anchor",
            "malformed_frontmatter",
            "exact_duplicate",
            "future_date",
        )
    }
    for k in range(per_rule):
        p = f"20-wiki/misc/orphan-{k:03d}.md"
        (vault / p).parent.mkdir(parents=True, exist_ok=True)
        (vault / p).write_text(f"# Orphan {k}\n\nNothing links here, nothing links out.\n")
        planted["orphan"].add(p)
        i = 10 * k + 1
        text = (vault / note_path(i)).read_text()
        (vault / note_path(i)).write_text(text + f"\nAlso [[missing-note-{k}]].\n")
        planted["broken_link"].add(note_path(i))
        j = 10 * k + 3
        text = (vault / note_path(j)).read_text()
        (vault / note_path(j)).write_text(text + f"\nAnd [[note-{(j + 5) % n:05d}#No Such Heading {k}]].\n")
        planted["broken_anchor"].add(note_path(j))
        m = 10 * k + 5
        text = (vault / note_path(m)).read_text()
        (vault / note_path(m)).write_text(text.replace("title: Note", "title: [Note", 1))
        planted["malformed_frontmatter"].add(note_path(m))
        d = 10 * k + 7
        dup = f"20-wiki/misc/copy-of-{d:05d}.md"
        shutil.copyfile(vault / note_path(d), vault / dup)
        planted["exact_duplicate"].add(min(note_path(d), dup))
        f = 10 * k + 9
        text = (vault / note_path(f)).read_text()
        (vault / note_path(f)).write_text(text.replace("created: ", "created: 2031-01-01\nold_created: ", 1))
        planted["future_date"].add(note_path(f))
    return planted


def planted_facts(n: int, per_rule: int) -> tuple[list[FactView], list[PendingReview], dict[str, set[str]]]:
    facts: list[FactView] = []
    pending: list[PendingReview] = []
    want: dict[str, set[str]] = {
        r: set()
        for r in (
            "two_active_values",
            "source_gone",
            "source_archived",
            "volatile_unconfirmed",
            "review_overdue",
            "fact_future_date",
            "fact_without_provenance",
        )
    }

    def fact(fid: str, subject: str, obj: str, **kw: object) -> FactView:
        base = {
            "fact_id": fid,
            "subject": subject,
            "predicate": "lives_in",
            "single_valued": True,
            "object": obj,
            "status": "active",
            "anchor": f"{note_path(int(fid.split('-')[-1]) % n)}#Details",
            "valid_at": "2026-06-01",
            "recorded_at": "2026-11-01",
            "statement": f"{subject} lives in {obj}.",
        }
        return FactView(**{**base, **kw})  # type: ignore[arg-type]

    for k in range(per_rule):
        facts += [fact(f"two-a-{k}", f"p{k}", "Seoul"), fact(f"two-b-{k}", f"p{k}", "Busan")]
        want["two_active_values"].add(f"p{k}")
        facts.append(fact(f"gone-{k}", f"g{k}", "Paris", anchor=f"20-wiki/deleted/gone-{k}.md#x"))
        want["source_gone"].add(f"gone-{k}")
        facts.append(fact(f"arch-{k}", f"a{k}", "Rome", anchor=f"20-wiki/archive/old-{k}.md#x"))
        want["source_archived"].add(f"arch-{k}")
        for v, obj in enumerate(["A", "B"]):
            facts.append(fact(f"vol-{v}-{k}", f"v{k}", obj, status="superseded"))
        facts.append(fact(f"vol-now-{k}", f"v{k}", "C", recorded_at="2025-01-01", valid_at="2025-01-01"))
        want["volatile_unconfirmed"].add(f"v{k}")
        pending.append(
            PendingReview(
                proposal_id=f"rev-{k}",
                created="2026-10-01",
                path="30-reviews/facts/2026-10-01.md",
                summary=f"review #{k:04d}",
            )
        )
        want["review_overdue"].add(f"rev-{k}")
        facts.append(fact(f"fut-{k}", f"f{k}", "Mars", valid_at="2031-01-01"))
        want["fact_future_date"].add(f"fut-{k}")
        facts.append(fact(f"noprov-{k}", f"n{k}", "Nowhere", anchor=""))
        want["fact_without_provenance"].add(f"noprov-{k}")
    return facts, pending, want


def clean_facts(n: int) -> list[FactView]:
    return [
        FactView(
            fact_id=f"ok-{k}",
            subject=f"ok{k}",
            predicate="lives_in",
            single_valued=True,
            object="Seoul",
            status="active",
            anchor=f"{note_path(k)}#Details",
            valid_at="2026-01-01",
            recorded_at="2026-11-01",
        )
        for k in range(min(n, 200))
    ]


def lint(
    vault_root: Path, store: DreamStore, facts: list[FactView], pending: list[PendingReview]
) -> tuple[list, dict[str, float]]:
    t0 = time.perf_counter()
    seen = read_vault(Vault(root=str(vault_root)), store)
    t1 = time.perf_counter()
    findings = lint_structure(seen.outlines) + lint_facts_structure(facts)
    findings += lint_grounding(seen.outlines, facts, pending, TODAY)
    t2 = time.perf_counter()
    store.save_outlines(seen.to_save, seen.removed)
    t3 = time.perf_counter()
    return findings, {
        "read_s": round(t1 - t0, 3),
        "rules_s": round(t2 - t1, 3),
        "save_s": round(t3 - t2, 3),
        "total_s": round(t3 - t0, 3),
        "notes_read": seen.read,
        "notes": len(seen.outlines),
    }


def vector_candidates(work: Path, store: DreamStore, pairs: int, seed: int) -> dict[str, float]:
    """Layer-3 candidates from stored vectors at this size: one random unit vector per wiki note (384 dims,
    as the bundled embedder) in a real Chroma collection and chunk table, `pairs` planted pairs whose second
    vector is the first plus a little noise (cosine ~0.99). Times the dream's own step (chunk table, Chroma
    read, ranking) and counts the planted pairs it proposes. Random vectors are near-orthogonal, unlike a
    real model's: this measures cost and that planted pairs surface, not the floor (eval.dream_floor)."""
    import numpy as np
    import polars as pl

    from hippo_assets.dream.merge import embedding_candidates, wiki_candidates
    from hippo_resources.chunk_store import CHUNKS, ChunkStore
    from hippo_resources.vector_store import VectorStore

    outlines = {p: o for p, (_, o) in store.outlines().items()}
    wiki = sorted(wiki_candidates(outlines))
    rng = np.random.default_rng(seed)
    mat = rng.standard_normal((len(wiki), 384)).astype(np.float32)
    planted = set()
    for k in range(pairs):
        a, b = 2 * k, 2 * k + 1
        mat[b] = mat[a] + 0.1 * rng.standard_normal(384).astype(np.float32) * np.linalg.norm(mat[a]) / 19.6
        planted.add((wiki[a], wiki[b]) if wiki[a] < wiki[b] else (wiki[b], wiki[a]))
    mat /= np.linalg.norm(mat, axis=1, keepdims=True)
    chunks = ChunkStore(root=str(work / "chunks"))
    chunks.path.mkdir(parents=True, exist_ok=True)
    ids = [f"c{i}" for i in range(len(wiki))]
    chunks.write(CHUNKS, pl.DataFrame({"chunk_id": ids, "path": wiki}))
    vectors = VectorStore(path=str(work / "chroma"))
    t0 = time.perf_counter()
    vectors.upsert(ids, mat, [{"path": p} for p in wiki])
    t1 = time.perf_counter()
    found, why = embedding_candidates(outlines, chunks, vectors)
    t2 = time.perf_counter()
    hit = planted & {(a, b) for a, b, _ in found}
    return {
        "notes_with_vectors": len(wiki),
        "store_s": round(t1 - t0, 2),
        "candidates_s": round(t2 - t1, 3),
        "planted_pairs": len(planted),
        "found": len(hit),
        "other_pairs": len(found) - len(hit),
        "skipped": why,
    }


def archive(vault: Path, per_rule: int) -> None:
    for k in range(per_rule):
        p = vault / f"20-wiki/archive/old-{k}.md"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"---\nstatus: archived\n---\n# Old {k}\n\n[[HOME]]\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.dream_bench")
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--per-rule", type=int, default=20, help="planted defects of each kind")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--work", type=Path, default=None, help="keep the vaults here (default: a temp folder)")
    args = ap.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="dream-bench-"))
    work.mkdir(parents=True, exist_ok=True)

    clean_root, dirty_root = work / "clean", work / "dirty"
    for r in (clean_root, dirty_root):
        if r.exists():
            shutil.rmtree(r)
        r.mkdir()
    t = time.perf_counter()
    clean = build(clean_root, args.notes, args.seed)
    archive(clean, args.per_rule)
    subprocess.run(["cp", "-a", str(clean), str(dirty_root / "vault")], check=True)
    dirty = dirty_root / "vault"
    want_notes = plant(dirty, args.notes, args.per_rule)
    facts, pending, want_facts = planted_facts(args.notes, args.per_rule)
    build_s = time.perf_counter() - t

    clean_findings, clean_time = lint(
        clean, DreamStore(path=str(clean_root / "dream.sqlite")), clean_facts(args.notes), []
    )
    store = DreamStore(path=str(dirty_root / "dream.sqlite"))
    found, cold = lint(dirty, store, facts, pending)
    _, warm = lint(dirty, store, facts, pending)
    rng = random.Random(args.seed + 1)
    for i in rng.sample(range(args.per_rule * 10 + 1, args.notes), 50):
        p = dirty / note_path(i)
        p.write_text(p.read_text() + "\nEdited.\n")
    found_after, edited = lint(dirty, store, facts, pending)
    by_vectors = vector_candidates(dirty_root, store, args.per_rule, args.seed)

    got: dict[str, set[str]] = {}
    for f in found:
        rule = "fact_future_date" if f.rule == "future_date" and f.detail.startswith("fact ") else f.rule
        key = f.path
        if rule in ("two_active_values", "volatile_unconfirmed"):
            key = f.detail.split(" ", 1)[0]
        elif rule in ("source_gone", "source_archived", "fact_future_date", "fact_without_provenance"):
            key = f.detail.split(" ", 2)[1].rstrip("'s:").removesuffix("'s")
        elif rule == "review_overdue":
            key = next((p.proposal_id for p in pending if p.summary[:20] in f.detail), f.path)
        got.setdefault(rule, set()).add(key)
    rows = []
    for rule, want in {**want_notes, **want_facts}.items():
        hit = want & got.get(rule, set())
        rows.append(
            {"rule": rule, "planted": len(want), "found": len(hit), "recall": round(len(hit) / len(want), 3)}
        )
    extra = {r: len(v - {**want_notes, **want_facts}.get(r, set())) for r, v in got.items()}
    planted_total = sum(r["planted"] for r in rows)
    found_total = sum(r["found"] for r in rows)
    figures = {
        "notes": args.notes,
        "per_rule": args.per_rule,
        "build_s": round(build_s, 1),
        "planted": planted_total,
        "found": found_total,
        "recall": round(found_total / planted_total, 4),
        "rows": rows,
        "unplanted_findings_on_dirty": extra,
        "findings_on_clean_copy": len(clean_findings),
        "clean_copy_rules": sorted({f.rule for f in clean_findings}),
        "cold": cold,
        "clean_cold": clean_time,
        "warm_nothing_changed": warm,
        "after_50_edits": edited,
        "findings_after_edits": len(found_after),
        "layer3_candidates_from_vectors": by_vectors,
    }
    print(f"notes {args.notes}, planted {planted_total}, found {found_total} (recall {figures['recall']})")
    for r in rows:
        print(f"  {r['rule']:<26} {r['found']}/{r['planted']}")
    print(f"findings on the clean copy: {len(clean_findings)} {figures['clean_copy_rules']}")
    print(f"unplanted findings on the dirty copy: {extra}")
    print(f"layer-3 candidates from stored vectors: {by_vectors}")
    print(
        f"cold lint {cold['total_s']} s (read {cold['read_s']} s, rules {cold['rules_s']} s, {cold['notes_read']} read)"
    )
    print(
        f"warm lint {warm['total_s']} s ({warm['notes_read']} read); after 50 edits {edited['total_s']} s ({edited['notes_read']} read)"
    )
    write_result("dream_bench", figures, argv)
    return 0 if figures["recall"] == 1.0 and not clean_findings else 1


if __name__ == "__main__":
    raise SystemExit(main())
