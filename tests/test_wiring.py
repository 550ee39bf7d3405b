"""The Dagster wiring, snapshotted: asset keys, groups, deps, job selections, check targets, schedules and
sensors. A wiring change is a visible diff of `tests/wiring.txt`; after a deliberate change, rewrite it with
`.venv/bin/python -m tests.test_wiring` and review the diff."""

from __future__ import annotations

import sys
from pathlib import Path

from dagster import Definitions

from hippo_assets.definitions import build_definitions
from hippo_settings import HippoSettings

SNAPSHOT = Path(__file__).with_name("wiring.txt")


def _keys(keys) -> str:  # noqa: ANN001
    return ", ".join(sorted(k.to_user_string() for k in keys)) or "-"


def render(defs: Definitions) -> str:
    graph = defs.resolve_asset_graph()
    out = ["# Dagster wiring of hippo_assets.definitions (default settings)", "", "## assets (group: deps)"]
    for key in sorted(graph.get_all_asset_keys(), key=lambda k: k.to_user_string()):
        node = graph.get(key)
        parts = getattr(node.partitions_def, "name", None)
        extra = f"  [partitions: {parts}]" if parts else ""
        out.append(f"{key.to_user_string()} ({node.group_name}): {_keys(node.parent_keys)}{extra}")
    out += ["", "## checks (asset: check)"]
    for ck in sorted(graph.asset_check_keys, key=lambda c: (c.asset_key.to_user_string(), c.name)):
        blocking = "blocking" if graph.get(ck).blocking else "warns"
        out.append(f"{ck.asset_key.to_user_string()}: {ck.name} ({blocking})")
    out += ["", "## jobs (assets | checks)"]
    for job in sorted(defs.resolve_all_job_defs(), key=lambda j: j.name):
        if job.name.startswith("__"):
            continue
        selected = job.asset_layer.selected_asset_keys
        checks = sorted(
            c.name for c in job.asset_layer.asset_graph.asset_check_keys if c.asset_key in selected
        )
        parts = getattr(job.partitions_def, "name", None)
        out.append(
            f"{job.name}{f' [partitions: {parts}]' if parts else ''}: {_keys(selected)} | {', '.join(checks) or '-'}"
        )
    out += ["", "## schedules (cron, time zone → job)"]
    for s in sorted(defs.schedules, key=lambda s: s.name):
        out.append(
            f"{s.name}: {s.cron_schedule}, {s.execution_timezone} → {s.job_name} ({s.default_status.value.lower()})"
        )
    out += ["", "## sensors (→ job)"]
    for s in sorted(defs.sensors, key=lambda s: s.name):
        out.append(f"{s.name} → {s.job_name} ({s.default_status.value.lower()})")
    return "\n".join(out) + "\n"


def current(root: Path) -> str:
    return render(build_definitions(HippoSettings(vault=root / "vault", home=root / "home")))


def test_the_wiring_is_the_snapshot(tmp_path: Path) -> None:
    got = current(tmp_path)
    assert got == SNAPSHOT.read_text(encoding="utf-8"), (
        "the Dagster wiring changed; if that is intended, run `.venv/bin/python -m tests.test_wiring` "
        "and commit tests/wiring.txt"
    )


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        SNAPSHOT.write_text(current(Path(tmp)), encoding="utf-8")
    print(f"wrote {SNAPSHOT}", file=sys.stderr)
