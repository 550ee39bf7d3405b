"""The entry point: `--version`, a closed pipe ends quietly, a bad `--select` names the asset, and
`make run` works end to end on the sample vault without an API key and ends with what to try next."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from hippo_cli.main import main
from hippo_cli.runner import unknown_selection_names
from hippo_settings import HippoSettings, env_names

REPO = Path(__file__).parents[2]


def test_version_names_the_package_python_and_dagster() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "hippo_cli.main", "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.startswith(f"hippo {version('hippocampus')} (Python 3.")
    assert "Dagster 1." in out.stdout


@pytest.mark.parametrize(
    ("args", "codes"),
    [
        (["doctor", "--json"], {141}),
        (["status", "--json"], {141}),
        (["--help"], {0, 141}),  # argparse itself drops the help text on a closed pipe, quietly
    ],
)
def test_a_reader_that_closes_the_pipe_gets_no_traceback(
    args: list[str], codes: set[int], tmp_path: Path
) -> None:
    """`hippo ... | head -1`: the reader is gone before the first write, as `head` is after a line."""
    env = {**os.environ, "HIPPO_VAULT": str(tmp_path / "v"), "HIPPO_HOME": str(tmp_path / "h")}
    env["HIPPO_EMBED_URL"] = "http://127.0.0.1:9/v1"  # doctor: a quick FAIL instead of loading a model
    read, write = os.pipe()
    os.close(read)  # closed before the process writes anything
    proc = subprocess.run(
        [sys.executable, "-m", "hippo_cli.main", *args],
        stdout=write,
        stderr=subprocess.PIPE,
        env=env,
        timeout=300,
    )
    os.close(write)
    assert b"Traceback" not in proc.stderr and b"BrokenPipeError" not in proc.stderr, proc.stderr.decode()
    assert b"Exception ignored" not in proc.stderr
    assert proc.returncode in codes  # 141: as a Unix tool stopped by SIGPIPE


def test_unknown_names_in_a_selection_are_named_with_close_matches() -> None:
    keys = ["chunks", "embeddings", "lexical_index", "vault_documents", "sources"]
    assert unknown_selection_names("chunk+", keys, ["index"]) == [
        "no asset named 'chunk' (did you mean: chunks?)"
    ]
    assert unknown_selection_names("key:embedings and group:indx", keys, ["index", "ingest"]) == [
        "no asset named 'embedings' (did you mean: embeddings?)",
        "no group named 'indx' (did you mean: index?)",
    ]
    assert unknown_selection_names("+lexical_index or chunks*", keys, []) == []
    assert unknown_selection_names("zzz", keys, []) == ["no asset named 'zzz'"]


def test_run_select_badname_names_it_and_lists_the_assets(
    settings: HippoSettings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster"))
    args = ["--vault", str(settings.vault), "--home", str(settings.home)]
    assert main(["run", "--select", "lexical_indx+", *args]) == 2
    err = capsys.readouterr().err
    assert "no asset named 'lexical_indx' (did you mean: lexical_index?)" in err
    assert "assets of refresh_job:" in err and "vault_documents" in err
    assert main(["run", "--select", "group:idnex", *args]) == 2
    assert "did you mean: index, ingest?" in capsys.readouterr().err
    assert main(["run", "--select", "gap_report", *args]) == 2  # real, but not part of refresh_job
    assert "names no asset of refresh_job" in capsys.readouterr().err


def test_make_run_on_the_sample_vault_without_an_api_key(tmp_path: Path, embed_cache: Path) -> None:
    """The README's first command, as a new user runs it (the installed .venv is reused)."""
    venv = Path(sys.executable).parents[1]
    # MAKELEVEL/MAKEFLAGS: under `make test` (CI) this make would be a sub-make and print "Leaving directory".
    dropped = {"DAGSTER_HOME", "MAKELEVEL", "MAKEFLAGS", "MFLAGS"}
    env = {k: v for k, v in os.environ.items() if k not in env_names().values() and k not in dropped}
    env.update(
        HIPPO_VAULT=str(tmp_path / "vault"),
        HIPPO_HOME=str(tmp_path / "home"),
        DAGSTER_HOME=str(tmp_path / "dagster"),
        HIPPO_EMBED_CACHE=str(embed_cache),
        OMP_NUM_THREADS="1",
        HIPPO_EMBED_THREADS="1",
    )
    proc = subprocess.run(
        ["make", "-o", f"{venv}/.installed", "run", f"VENV={venv}"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    assert "refresh_job succeeded" in proc.stderr
    assert (
        "20-wiki/personal-health/sleep-hygiene.md#" in proc.stdout
    )  # the first sample search found its page
    tail = proc.stdout.rstrip().splitlines()[-8:]
    assert tail[0] == "Next, try:"
    assert [line.split()[0] for line in tail[1:5]] == ["1.", "2.", "3.", "4."]
    assert "serve" in tail[1] and "search" in tail[2] and " ui" in tail[3] and "mcp install" in tail[4]
    assert tail[7].endswith("hippo doctor")
    assert (tmp_path / "vault" / "HOME.md").exists()  # the sample vault was laid down
