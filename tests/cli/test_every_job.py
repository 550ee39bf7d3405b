"""`hippo run --job NAME` works for the name of every job and every schedule of the Definitions, on a small
vault (the compile job has nothing pending once compiled; the loaders find empty folders; the evaluation
runs the tiny golden set through `--config`, the launchpad's run config)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hippo_assets.definitions import build_definitions
from hippo_cli.main import main
from hippo_settings import HippoSettings
from tests.conftest import make_vault

SETTINGS = HippoSettings(vault=Path("unused"), home=Path("unused"))
DEFS = build_definitions(SETTINGS)
JOBS = sorted(j.name for j in DEFS.resolve_all_job_defs() if not j.name.startswith("__"))
SCHEDULES = sorted(s.name for s in DEFS.schedules)
GOLDEN = Path(__file__).parents[1] / "fixtures" / "golden-tiny.jsonl"


@pytest.fixture(scope="module")
def cli_env(tmp_path_factory: pytest.TempPathFactory, embed_cache: Path) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("every-job")
    vault = make_vault(root)
    empty = root / "no-agent-logs"
    empty.mkdir()
    with pytest.MonkeyPatch.context() as mp:
        for name, value in {
            "HIPPO_VAULT": vault,
            "HIPPO_HOME": root / "home",
            "HIPPO_EMBED_CACHE": embed_cache,
            "DAGSTER_HOME": root / "dagster",
            "HIPPO_CLAUDE_PROJECTS": empty,
            "HIPPO_CODEX_HOME": empty,
            "HIPPO_EXPORTS": empty,
        }.items():
            mp.setenv(name, str(value))
        for name in ("ANTHROPIC_API_KEY", "HIPPO_AUTO_APPROVE", "HIPPO_DRY_RUN", "HIPPO_PG_DSN"):
            mp.delenv(name, raising=False)
        assert main(["run"]) == 0  # index first: gap probes and the compiler's related pages need it
        yield vault


def test_every_job_and_schedule_has_a_name_the_cli_runs() -> None:
    assert set(JOBS) >= {s.job_name for s in DEFS.schedules}
    assert len(JOBS) == 18 and len(SCHEDULES) == 11


@pytest.mark.parametrize("name", JOBS + SCHEDULES)
def test_hippo_run_job(name: str, cli_env: Path, capsys: pytest.CaptureFixture) -> None:
    job = DEFS.get_schedule_def(name).job_name if name in SCHEDULES else name
    extra = []
    if job == "eval_job":
        config = cli_env.parent / "eval-config.yaml"
        config.write_text(
            f"ops:\n  eval_report:\n    config:\n      golden: '{GOLDEN}'\n      vault: '{cli_env}'\n",
            encoding="utf-8",
        )
        extra = ["--config", str(config)]
    assert main(["run", "--job", name, *extra]) == 0, capsys.readouterr().err[-3000:]
    err = capsys.readouterr().err
    assert f"of {job} succeeded" in err or "nothing to compile" in err, err[-2000:]


def test_an_unreadable_run_config_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "list.yaml").write_text("- not a mapping\n", encoding="utf-8")
    common = ["--vault", str(tmp_path)]
    assert main(["run", "--job", "eval_job", "--config", str(tmp_path / "missing.yaml"), *common]) == 2
    assert main(["run", "--job", "eval_job", "--config", str(tmp_path / "list.yaml"), *common]) == 2
    assert "cannot read the run config" in capsys.readouterr().err
