"""`hippo review`, `hippo approve CARD` and `hippo run --job NAME` (any job or schedule of the Definitions)."""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from dagster import Definitions, JobDefinition

from hippo_core.vault.vault_layout import GATES_DIR
from hippo_core.wiki import approvals
from hippo_core.wiki.cards import fingerprint
from hippo_core.wiki.gates import latest_verdicts
from hippo_resources import Vault
from hippo_settings import HippoSettings


def review(settings: HippoSettings, as_json: bool = False, out: TextIO | None = None) -> int:
    """Approvals waiting for a tick, and the gate failures of cards still in staging."""
    out = out or sys.stdout  # looked up at call time: a default bound at import outlives a swapped stdout
    vault = Vault(root=str(settings.vault))
    vault.check_exists()
    waiting = []
    for ln in vault.approval_lines("open", "ticked"):  # not yet acted on
        changed = not vault.exists(ln.card) or fingerprint(vault.read_text(ln.card)) != ln.fingerprint
        waiting.append(
            {**ln.model_dump(include={"card", "title", "file", "ticked", "fingerprint"}), "changed": changed}
        )
    verdicts = latest_verdicts(vault.read_ledger(GATES_DIR))
    cards, unreadable = vault.staged_cards()
    failures = []
    for card in cards:
        v = verdicts.get(card.path)
        if v and not v["passed"]:
            failures.append(
                {
                    "card": card.path,
                    "gates": v["failed_gates"],
                    "citations": [c for c in v["citations"] if not c["ok"]],
                    "judge": v["judge"],
                    "stale": v["fingerprint"] != fingerprint(card.text),
                }
            )
    if as_json:
        print(
            json.dumps(
                {"waiting": waiting, "gate_failures": failures, "unreadable": unreadable},
                ensure_ascii=False,
                indent=2,
            ),
            file=out,
        )
        return 0
    print(f"Waiting for approval ({len(waiting)}):", file=out)
    for w in waiting:
        box = "[x]" if w["ticked"] else "[ ]"
        note = "  (changed since proposed: the tick will be rejected)" if w["changed"] else ""
        print(f"  {box} {w['card']}  {w['title']}{note}", file=out)
    print(f"Gate failures ({len(failures)}):", file=out)
    for f in failures:
        print(f"  {f['card']}", file=out)
        for g in f["gates"]:
            print(f"    gate {g['gate']}: {g['why']}", file=out)
        for c in f["citations"]:
            print(f"    citation {c['anchor']}: {c['reason']}", file=out)
        judge = f["judge"]
        if judge.get("decision") != "accept":
            print(
                f"    judge ({judge.get('by')}): {judge.get('decision')}: {'; '.join(judge.get('reasons') or [])}",
                file=out,
            )
    for u in unreadable:
        print(f"  unreadable card {u['card']}: {u['error']}", file=out)
    return 0


def approve(settings: HippoSettings, card: str, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Tick the open box of a card (path, slug or title), exactly as a person would in Obsidian."""
    out, err = out or sys.stdout, err or sys.stderr
    vault = Vault(root=str(settings.vault))
    vault.check_exists()
    want = card.strip().lower().removesuffix(".md")
    open_lines = vault.approval_lines("open")
    hits = [
        ln
        for ln in open_lines
        if want
        in (
            ln.card.lower().removesuffix(".md"),
            ln.card.rsplit("/", 1)[-1].lower().removesuffix(".md"),
            ln.title.lower(),
        )
    ]
    if not hits:
        print(f"hippo approve: no open approval for {card!r} (see `hippo review`)", file=err)
        return 2
    if len({ln.card for ln in hits}) > 1:
        print(
            f"hippo approve: {card!r} matches several cards: {', '.join(sorted({ln.card for ln in hits}))}",
            file=err,
        )
        return 2
    line = hits[-1]
    vault.write_text(line.file, approvals.tick(vault.read_text(line.file), line.line_no))
    print(
        f"approved {line.card} in {line.file}; promotion runs with the approvals sensor or "
        "`hippo run --job promote_job`",
        file=out,
    )
    if not vault.exists(line.card) or fingerprint(vault.read_text(line.card)) != line.fingerprint:
        print(
            "warning: the card changed since it was proposed; promotion will reject this approval", file=err
        )
    return 0


def job_for(defs: Definitions, name: str) -> JobDefinition | None:
    """The job named `name`, or the job of the schedule named `name`."""
    schedules = {s.name: s.job_name for s in defs.schedules}
    jobs = {j.name for j in defs.resolve_all_job_defs() if not j.name.startswith("__")}
    job_name = schedules.get(name, name)
    return defs.resolve_job_def(job_name) if job_name in jobs else None


def run_named_job(
    settings: HippoSettings,
    name: str,
    instance: Any,
    out: TextIO | None = None,
    run_config: dict[str, Any] | None = None,
) -> int:
    """Run a job (or the job of a schedule) of the Definitions now, in-process on the instance. A partitioned
    compile runs once per pending source; with nothing pending it makes no run and no LLM call."""
    from hippo_assets.definitions import build_definitions
    from hippo_cli.runner import run_job
    from hippo_core.wiki.compile_queue import PARTITIONS, partition_key_for
    from sensors.compile import pending_sources

    out = out or sys.stderr
    defs = build_definitions(settings)
    job = job_for(defs, name)
    if job is None:
        jobs = sorted(j.name for j in defs.resolve_all_job_defs() if not j.name.startswith("__"))
        schedules = sorted(s.name for s in defs.schedules)
        print(
            f"hippo run: no job or schedule {name!r}; jobs: {', '.join(jobs)}; schedules: {', '.join(schedules)}",
            file=out,
        )
        return 2
    if getattr(job.partitions_def, "name", None) != PARTITIONS:  # not the per-source compile partitions
        return 0 if run_job(job, instance, run_config, out=out) else 1
    keys = [partition_key_for(rel) for rel, _, _ in pending_sources(Vault(root=str(settings.vault)))]
    if not keys:
        print("nothing to compile: every source is compiled at its current content (no LLM call)", file=out)
        return 0
    instance.add_dynamic_partitions(PARTITIONS, keys)
    ok = [run_job(job, instance, run_config, partition_key=key, out=out) for key in keys]
    return 0 if all(ok) else 1
