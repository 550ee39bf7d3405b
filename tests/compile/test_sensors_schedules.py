"""The compile and approvals sensors, and the loop's schedules (local time, configurable, visible in Definitions)."""

from __future__ import annotations

from pathlib import Path

from dagster import (
    DagsterInstance,
    RunRequest,
    SensorResult,
    SkipReason,
    build_schedule_context,
    build_sensor_context,
)

from hippo_assets.definitions import build_definitions
from hippo_core.wiki import approvals
from hippo_core.wiki.compile_queue import PARTITIONS
from hippo_resources import Ledger, Vault
from hippo_settings import HippoSettings
from sensors.compile import build_compile_sensor
from sensors.publish import build_approvals_sensor
from tests.compile.conftest import compile_source, promote
from tests.conftest import make_vault


def evaluate(sensor, **context):  # noqa: ANN001, ANN201
    """One sensor tick; the context is opened with `with`, as Dagster does (the vault resource has a teardown)."""
    with build_sensor_context(**context) as ctx:
        return sensor(ctx)


def _settings(tmp_path: Path, embed_cache: Path) -> HippoSettings:
    return HippoSettings(
        vault=make_vault(tmp_path, with_inbox=False), home=tmp_path / "home", embed_cache_path=embed_cache
    )


def test_compile_sensor_adds_partitions_and_requests_each_pending_source(
    tmp_path: Path, embed_cache: Path
) -> None:
    settings = _settings(tmp_path, embed_cache)
    instance = DagsterInstance.ephemeral()
    sensor = build_compile_sensor("compile_job")
    vault = Vault(root=str(settings.vault))
    res = {"vault": vault, "ledger": Ledger(path=str(settings.ledger_path))}
    result = evaluate(sensor, instance=instance, resources=res)
    assert isinstance(result, SensorResult)
    [add] = result.dynamic_partitions_requests
    assert add.partition_keys == ["kiwi-notes"]
    [request] = result.run_requests
    assert request.partition_key == "kiwi-notes" and request.run_key.startswith("compile-kiwi-notes-")
    assert compile_source(settings, instance, "10-sources/kiwi-notes.md").success
    assert isinstance(evaluate(sensor, instance=instance, resources=res), SkipReason)
    # an edited source is compiled again (new content → new run key)
    src = settings.vault / "10-sources" / "kiwi-notes.md"
    src.write_text(src.read_text(encoding="utf-8") + "\n형태소 분석 결과는 캐시한다.\n", encoding="utf-8")
    again = evaluate(sensor, instance=instance, resources=res)
    assert isinstance(again, SensorResult) and not again.dynamic_partitions_requests
    assert again.run_requests[0].run_key != request.run_key


def test_sources_that_could_fill_an_open_gap_compile_first(tmp_path: Path, embed_cache: Path) -> None:
    settings = _settings(tmp_path, embed_cache)
    (settings.vault / "10-sources" / "aa-bicycle.md").write_text(
        "---\ntitle: Bicycle care\n---\n\n# Bicycle care\n\nOil the bicycle chain every 300 km.\n",
        encoding="utf-8",
    )
    ledger = Ledger(path=str(settings.ledger_path))
    res = {"vault": Vault(root=str(settings.vault)), "ledger": ledger}
    sensor = build_compile_sensor("compile_job")
    plain = evaluate(sensor, instance=DagsterInstance.ephemeral(), resources=res)
    assert [r.partition_key for r in plain.run_requests] == ["aa-bicycle", "kiwi-notes"]  # by name
    ledger.record_gap("kiwi 사용자 사전", "Kiwi 사용자 사전은?", "zero-hit", [])
    gapped = evaluate(sensor, instance=DagsterInstance.ephemeral(), resources=res)
    assert [r.partition_key for r in gapped.run_requests] == ["kiwi-notes", "aa-bicycle"]
    assert float(gapped.run_requests[0].tags["hippo/gap_relevance"]) == 1.0


def test_approvals_sensor_notices_ticked_boxes_once(tmp_path: Path, embed_cache: Path) -> None:
    settings = _settings(tmp_path, embed_cache)
    instance = DagsterInstance.ephemeral()
    assert compile_source(settings, instance, "10-sources/kiwi-notes.md").success
    sensor = build_approvals_sensor("promote_job")
    res = {"vault": Vault(root=str(settings.vault))}
    assert isinstance(evaluate(sensor, resources=res), SkipReason)
    [f] = (settings.vault / "30-reviews" / "approvals").glob("*.md")
    f.write_text(
        approvals.tick(
            f.read_text(encoding="utf-8"), approvals.parse("f", f.read_text(encoding="utf-8"))[0].line_no
        ),
        encoding="utf-8",
    )
    request = evaluate(sensor, resources=res)
    assert isinstance(request, RunRequest) and request.run_key.startswith("approvals-")
    assert evaluate(sensor, resources=res).run_key == request.run_key  # same ticks → same key → one run
    assert promote(settings, instance).success
    assert isinstance(evaluate(sensor, resources=res), SkipReason)  # the outcome is on the line now


def test_schedules_local_time_configurable_and_compile_schedule_requests_partitions(
    tmp_path: Path, embed_cache: Path
) -> None:
    settings = _settings(tmp_path, embed_cache)
    defs = build_definitions(settings.model_copy(update={"timezone": "Asia/Seoul"}))
    got = {s.name: (s.cron_schedule, s.execution_timezone, s.job_name) for s in defs.schedules}
    assert got["nightly_janitor"] == ("30 1 * * *", "Asia/Seoul", "janitor_job")
    assert got["nightly_compile"] == ("45 1 * * *", "Asia/Seoul", "compile_job")
    assert got["nightly_index_pages"] == ("25 3 * * *", "Asia/Seoul", "index_pages_job")
    assert got["approval_rounds"] == ("0 9,21 * * *", "Asia/Seoul", "promote_job")
    assert {s.name for s in defs.sensors} >= {"inbox_sensor", "compile_sensor", "approvals_sensor"}
    custom = build_definitions(
        HippoSettings.from_env({"HIPPO_CRON_COMPILE": "5 2 * * *"}, vault=settings.vault)
    )
    assert custom.get_schedule_def("nightly_compile").cron_schedule == "5 2 * * *"

    [compile_schedule] = [s for s in defs.schedules if s.name == "nightly_compile"]
    repo = defs.get_repository_def()  # before the test instance exists: Dagster caches its load context
    (tmp_path / "dagster").mkdir()
    with DagsterInstance.local_temp(str(tmp_path / "dagster")) as instance:
        _compile_schedule_ticks(settings, compile_schedule, instance, repo)


def _compile_schedule_ticks(
    settings: HippoSettings, compile_schedule, instance: DagsterInstance, repo
) -> None:  # noqa: ANN001
    res = {"vault": Vault(root=str(settings.vault)), "ledger": Ledger(path=str(settings.ledger_path))}
    with build_schedule_context(instance=instance, resources=res, repository_def=repo) as ctx:
        requests = compile_schedule.evaluate_tick(ctx).run_requests
    assert [r.partition_key for r in requests] == ["kiwi-notes"]
    assert instance.get_dynamic_partitions(PARTITIONS) == ["kiwi-notes"]
    assert compile_source(settings, instance, "10-sources/kiwi-notes.md").success
    with build_schedule_context(instance=instance, resources=res, repository_def=repo) as ctx:
        empty = compile_schedule.evaluate_tick(ctx)
    assert not empty.run_requests and "no LLM call" in (empty.skip_message or "")
