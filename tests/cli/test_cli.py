"""The `hippo` command line, as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from dagster import DagsterInstance

from hippo_cli.main import main
from hippo_settings import HippoSettings

COMMANDS = ["init", "run", "search", "serve", "status"]


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_every_command_has_help(command: str | None) -> None:
    args = [sys.executable, "-m", "hippo_cli.main", *([command] if command else []), "--help"]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    assert "usage: hippo" in out
    if command is None:
        assert all(c in out for c in COMMANDS)


def test_init_lays_out_a_vault_under_git(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    assert main(["init", str(vault)]) == 0
    for folder in (
        "00-inbox/.processed",
        "05-todo",
        "10-sources",
        "20-wiki",
        "30-reviews/staging",
        "30-reviews/approvals",
        "50-ops",
        "90-system",
    ):
        assert (vault / folder).is_dir(), folder
    assert "Frontmatter" in (vault / "SCHEMA.md").read_text(encoding="utf-8")
    log = subprocess.run(
        ["git", "-C", str(vault), "log", "--oneline"], capture_output=True, text=True, check=True
    )
    assert "hippo init" in log.stdout
    assert main(["init", str(vault)]) == 0  # idempotent on a vault


def test_init_on_a_non_empty_folder_only_lists_what_it_would_add(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    other = tmp_path / "project"
    other.mkdir()
    (other / "main.c").write_text("int main(){}")
    assert main(["init", str(other)]) == 0
    out = capsys.readouterr().out
    assert "would add" in out and "SCHEMA.md" in out and "--yes" in out
    added = [line for line in out.splitlines() if line.startswith(("  folder", "  file"))]
    assert added and not any("main.c" in line for line in added)  # the person's file is not among the adds
    git_line = next(line for line in out.splitlines() if line.startswith("  git"))
    assert (
        "first commit of your 1 file(s) as they are (main.c)" in git_line
    )  # it is listed before it is committed
    assert sorted(p.name for p in other.iterdir()) == ["main.c"]  # nothing changed


def test_run_records_on_the_instance_and_prints_progress_and_summary(
    settings: HippoSettings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    dagster_home = tmp_path / "dagster_home"
    monkeypatch.setenv("DAGSTER_HOME", str(dagster_home))
    monkeypatch.setenv("HIPPO_EMBED_CACHE", str(settings.embed_cache))
    args = ["--vault", str(settings.vault), "--home", str(settings.home)]
    assert main(["run", *args]) == 0
    err = capsys.readouterr().err
    assert "▶ embeddings" in err and "chunks embedded" in err
    assert "Summary" in err and "✔ check vectors_match_chunks passed" in err and "succeeded" in err
    assert (dagster_home / "dagster.yaml").exists()  # the embedded default was written
    instance = DagsterInstance.from_config(str(dagster_home))
    runs = instance.get_runs()
    assert len(runs) == 1 and runs[0].is_success and runs[0].tags["hippo/trigger"] == "cli"
    assert runs[0].job_name == "refresh_job"  # a job of the code location: the UI can re-execute it

    assert main(["search", "침실의 온도를 어떻게 맞춰야 하나요", "--json", "--k", "2", *args]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["results"][0]["anchor"] == "20-wiki/health/sleep-hygiene.md#침실 환경"
    assert main(["search", "hook", "--lane", "gossip", *args]) == 2
    assert "unknown lane" in capsys.readouterr().err
    assert main(["status", "--json", *args]) == 0
    assert json.loads(capsys.readouterr().out)["indexed"] is True

    # a selection re-runs just that part of the graph
    assert main(["run", "--select", "lexical_index", *args]) == 0
    err = capsys.readouterr().err
    assert "▶ lexical_index" in err and "▶ embeddings" not in err
    # read within refresh_job: `lexical_index+` leaves out the compile and quality assets downstream
    assert main(["run", "--select", "lexical_index+", *args]) == 0
    assert "▶ gap_probe" not in capsys.readouterr().err
    assert main(["run", "--select", "no_such_asset", *args]) == 2
    assert main(["run", "--select", "gap_report", *args]) == 2
    assert "names no asset of refresh_job" in capsys.readouterr().err


def test_search_before_any_run_says_what_to_do(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["search", "anything", "--vault", str(tmp_path), "--home", str(tmp_path / "h")]) == 3
    assert "hippo run" in capsys.readouterr().err


def test_run_without_dagster_home_explains(settings: HippoSettings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    with pytest.raises(SystemExit, match="no Dagster home"):
        main(["run", "--vault", str(settings.vault), "--home", str(settings.home)])


def test_instance_yaml_shipped_with_the_cli_is_the_repo_default() -> None:
    root = Path(__file__).parents[2]
    assert (root / "dagster.yaml").read_text() == (root / "hippo_cli" / "dagster_default.yaml").read_text()
