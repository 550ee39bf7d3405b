"""The inbox sensor on a real vault: batches, cursor, content-hash run keys, and the real ingest job."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dagster import (
    DagsterInstance,
    RunRequest,
    SensorResult,
    SkipReason,
    build_sensor_context,
    validate_run_config,
)

from hippo_assets.definitions import build_definitions
from hippo_cli.vault_init import init_vault
from hippo_core.vault.fingerprints import sha256_bytes
from hippo_resources import Vault
from hippo_settings import HippoSettings
from sensors.ingest import BATCH_SIZE, build_inbox_sensor

SENSOR = build_inbox_sensor("ingest_job")


def evaluate(sensor, **context):  # noqa: ANN001, ANN201
    """One sensor tick; the context is opened with `with`, as Dagster does (the vault resource has a teardown)."""
    with build_sensor_context(**context) as ctx:
        return sensor(ctx)


@pytest.fixture
def bare_vault(tmp_path: Path) -> Path:
    """`hippo init` layout only: an empty inbox."""
    root = tmp_path / "vault"
    init_vault(root)
    return root


def drop(vault: Path, name: str, data: str | bytes) -> None:
    path = vault / "00-inbox" / name
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)


def tick(vault: Path, cursor: str | None = None, sensor=SENSOR) -> SensorResult | SkipReason:  # noqa: ANN001
    return evaluate(sensor, cursor=cursor, resources={"vault": Vault(root=str(vault))})


def files_of(request: RunRequest) -> list[str]:
    return request.run_config["ops"]["sources"]["config"]["files"]


def test_new_files_start_one_run_listing_them(bare_vault: Path) -> None:
    drop(bare_vault, "b-note.md", "# B\n\nsecond\n")
    drop(bare_vault, "a-note.txt", "first\n")
    drop(bare_vault, "커피냅.markdown", "# 커피냅\n")
    result = tick(bare_vault)
    assert isinstance(result, SensorResult)
    [request] = result.run_requests
    assert files_of(request) == ["00-inbox/a-note.txt", "00-inbox/b-note.md", "00-inbox/커피냅.markdown"]
    assert request.tags == {"hippo/trigger": "inbox", "hippo/files": "3"}
    assert request.run_key.startswith("inbox-") and len(request.run_key) == len("inbox-") + 20
    seen = json.loads(result.cursor)["seen"]
    expected = {
        sha256_bytes((bare_vault / "00-inbox" / n).read_bytes())
        for n in ("a-note.txt", "b-note.md", "커피냅.markdown")
    }
    assert set(seen) == expected  # the cursor remembers content, not names


def test_second_tick_with_the_cursor_skips_and_only_new_files_follow(bare_vault: Path) -> None:
    drop(bare_vault, "one.md", "one\n")
    first = tick(bare_vault)
    assert isinstance(first, SensorResult)
    second = tick(bare_vault, first.cursor)
    assert isinstance(second, SkipReason) and "no new files" in second.skip_message
    drop(bare_vault, "two.md", "two\n")
    third = tick(bare_vault, first.cursor)
    assert isinstance(third, SensorResult)
    assert [files_of(r) for r in third.run_requests] == [["00-inbox/two.md"]]
    assert len(json.loads(third.cursor)["seen"]) == 2


def test_same_bytes_make_the_same_run_key(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    init_vault(a)
    init_vault(b)
    drop(a, "x.md", "same bytes\n")
    drop(a, "y.md", "other bytes\n")
    drop(b, "renamed-2.md", "other bytes\n")  # same contents, other names, other order
    drop(b, "renamed-1.md", "same bytes\n")
    key_a = tick(a).run_requests[0].run_key
    key_b = tick(b).run_requests[0].run_key
    assert key_a == key_b
    drop(b, "renamed-1.md", "changed bytes\n")
    assert tick(b).run_requests[0].run_key != key_a


def test_a_file_dropped_again_with_the_same_bytes_does_not_start_a_run(bare_vault: Path) -> None:
    drop(bare_vault, "note.md", "content\n")
    first = tick(bare_vault)
    (bare_vault / "00-inbox/note.md").rename(bare_vault / "00-inbox/.processed/note.md")
    drop(bare_vault, "note (copy).md", "content\n")
    assert isinstance(tick(bare_vault, first.cursor), SkipReason)


def test_a_burst_is_split_into_batches_of_at_most_twenty(bare_vault: Path) -> None:
    for i in range(45):
        drop(bare_vault, f"burst-{i:02d}.md", f"# Burst {i}\n\nnote {i}\n")
    result = tick(bare_vault)
    assert isinstance(result, SensorResult)
    batches = [files_of(r) for r in result.run_requests]
    assert [len(b) for b in batches] == [20, 20, 5] and BATCH_SIZE == 20
    flat = [f for b in batches for f in b]
    assert flat == [f"00-inbox/burst-{i:02d}.md" for i in range(45)]  # each file exactly once, in order
    assert len({r.run_key for r in result.run_requests}) == 3
    assert [r.tags["hippo/files"] for r in result.run_requests] == ["20", "20", "5"]
    assert len(json.loads(result.cursor)["seen"]) == 45
    assert isinstance(tick(bare_vault, result.cursor), SkipReason)


def test_unsupported_hidden_and_processed_files_are_ignored(bare_vault: Path) -> None:
    drop(bare_vault, "photo.png", b"\x89PNG\r\n")
    drop(bare_vault, "archive.zip", b"PK\x03\x04")
    drop(bare_vault, ".DS_Store", b"\x00\x01")
    (bare_vault / "00-inbox/.processed/old.md").write_text("already done\n", encoding="utf-8")
    assert isinstance(tick(bare_vault), SkipReason)
    drop(bare_vault, "LOUD.MD", "# upper-case suffix\n")
    drop(bare_vault, "paper.PDF", b"%PDF-1.7")  # documents are ingested too (issue 14 point 4)
    result = tick(bare_vault)
    assert [files_of(r) for r in result.run_requests] == [["00-inbox/LOUD.MD", "00-inbox/paper.PDF"]]


def test_missing_vault_or_inbox_skips(tmp_path: Path) -> None:
    missing = tick(tmp_path / "nowhere")
    assert isinstance(missing, SkipReason) and "vault not found" in missing.skip_message
    (tmp_path / "no-inbox").mkdir()
    assert isinstance(tick(tmp_path / "no-inbox"), SkipReason)


def test_a_garbled_cursor_is_treated_as_empty(bare_vault: Path) -> None:
    drop(bare_vault, "note.md", "content\n")
    for cursor in ("not json", "[1, 2]", '{"seen": "oops"}'):
        result = tick(bare_vault, cursor)
        assert isinstance(result, SensorResult) and len(result.run_requests) == 1


def test_batch_size_is_a_parameter(bare_vault: Path) -> None:
    for i in range(5):
        drop(bare_vault, f"n{i}.md", f"n{i}\n")
    result = tick(bare_vault, sensor=build_inbox_sensor("ingest_job", batch_size=2))
    assert [len(files_of(r)) for r in result.run_requests] == [2, 2, 1]


# --- against the real Definitions ----------------------------------------------------------------


def test_the_sensor_is_wired_into_the_definitions(settings: HippoSettings) -> None:
    defs = build_definitions(settings)
    sensor = defs.get_sensor_def("inbox_sensor")
    assert sensor.job_name == "ingest_job"
    job = defs.get_job_def(sensor.job_name)
    assert job.name == "ingest_job"
    assert sensor.required_resource_keys == {"vault"}
    assert "vault" in defs.resources
    assert sensor.minimum_interval_seconds == 30
    defs.get_repository_def().load_all_definitions()  # the whole code location resolves


def test_a_run_request_runs_the_ingest_job_on_exactly_its_batch(settings: HippoSettings) -> None:
    """The fixture inbox holds 2 notes; 21 more make a full batch of 20 and a second batch of 3."""
    vault = settings.vault
    for i in range(21):
        drop(vault, f"burst-{i:02d}.md", f"# Burst {i}\n\nBurst note number {i} about sandpipers.\n")
    defs = build_definitions(settings)
    sensor = defs.get_sensor_def("inbox_sensor")
    result = evaluate(sensor, resources={"vault": defs.resources["vault"]})
    assert isinstance(result, SensorResult)
    assert [len(files_of(r)) for r in result.run_requests] == [20, 3]
    job = defs.get_job_def("ingest_job")
    for request in result.run_requests:
        assert validate_run_config(job, request.run_config)  # every request's config fits the job

    request = result.run_requests[1]
    batch = files_of(request)
    assert batch == ["00-inbox/burst-20.md", "00-inbox/coffee-nap.md", "00-inbox/meeting-notes.txt"]
    run = job.execute_in_process(
        run_config=request.run_config, instance=DagsterInstance.ephemeral(), tags=request.tags
    )
    assert run.success
    meta = {k: v.value for k, v in run.asset_materializations_for_node("sources")[-1].metadata.items()}
    assert meta["ingested"] == 3 and meta["rejected"] == 0 and meta["not_in_inbox"] == []
    processed = sorted(
        p.name for p in (vault / "00-inbox/.processed").iterdir() if not p.name.startswith(".")
    )
    assert processed == ["burst-20.md", "coffee-nap.md", "meeting-notes.txt"]
    left = sorted(p.name for p in (vault / "00-inbox").iterdir() if p.is_file() and p.name != ".gitkeep")
    assert left == [f"burst-{i:02d}.md" for i in range(20)]  # the other batch was not touched
    assert len(list((vault / "10-sources").glob("burst-*.md"))) == 1
    # the whole job ran: the new source is searchable in the next lexical generation
    assert run.asset_materializations_for_node("lexical_index")

    # the next tick, with the cursor, asks for nothing: the first batch is already requested
    again = evaluate(sensor, cursor=result.cursor, resources={"vault": defs.resources["vault"]})
    assert isinstance(again, SkipReason)
