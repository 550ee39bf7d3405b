"""The user's config file (one home, remembered) and the `hippo` command as a person can type it.

`hippo init` and `make run` write `$XDG_CONFIG_HOME/hippocampus/config.toml` (else
`~/.config/hippocampus/config.toml`) naming the vault, the home and the Dagster home as absolute paths;
`HippoSettings.from_env` reads it below the environment and the flags. `hippo config` shows it, sets it,
and puts `hippo` on the PATH (a symlink in ~/.local/bin when that folder is on the PATH).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shlex
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

from hippo_settings import (
    CONFIG_FIELDS,
    ConfigFileError,
    HippoSettings,
    config_file_path,
    read_config_file,
    render_config_file,
)


def config_path(env: Mapping[str, str] | None = None) -> Path:
    path = config_file_path(os.environ if env is None else env)
    if path is None:  # neither XDG_CONFIG_HOME nor HOME: the account's home from the password database
        path = Path.home() / ".config" / "hippocampus" / "config.toml"
    return path


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """`$XDG_DATA_HOME/hippocampus`, else `~/.local/share/hippocampus`: where a vault's stores go."""
    env = os.environ if env is None else env
    xdg = env.get("XDG_DATA_HOME")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".local" / "share"
    return base / "hippocampus"


def stores_for(vault: Path, env: Mapping[str, str] | None = None) -> dict[str, Path]:
    """The home and Dagster home of a vault: one folder per vault (its name and a hash of its path), so
    adopting a second vault never mixes its index with the first one's."""
    vault = vault.resolve()
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", vault.name).strip("-.") or "vault"
    base = data_dir(env) / "vaults" / f"{slug}-{hashlib.sha256(str(vault).encode()).hexdigest()[:8]}"
    return {"home": base / "home", "dagster_home": base / "dagster"}


def write_config(values: Mapping[str, Path], env: Mapping[str, str] | None = None) -> Path:
    """Write the config file (absolute paths), keeping the fields not given; returns its path. Written
    through a symlinked file (the link stays)."""
    path = config_path(env)
    try:
        current = read_config_file(path)
    except ConfigFileError:
        current = {}  # unreadable: replaced by a good one (the caller names the file it wrote)
    merged = {**current, **{k: Path(v).expanduser().resolve() for k, v in values.items()}}
    target = path.resolve() if path.is_symlink() else path
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.hippo-tmp")
    tmp.write_text(render_config_file(merged), encoding="utf-8")
    os.replace(tmp, target)
    return path


def hippo_command() -> str:
    """How to start this `hippo` from any folder: `hippo` when that name on the PATH is this program,
    else its absolute path."""
    here = Path(sys.executable).parent / "hippo"
    found = shutil.which("hippo")
    if found and (not here.exists() or Path(found).resolve() == here.resolve()):
        return "hippo"
    return shlex.quote(str(here)) if here.exists() else "hippo"


def link_into_path(env: Mapping[str, str] | None = None) -> str:
    """Put `hippo` on the PATH: a symlink in ~/.local/bin when that folder is on the PATH (an existing
    file there that is not ours is left alone). Returns what a person should know, one line."""
    env = os.environ if env is None else env
    exe = Path(sys.executable).parent / "hippo"
    if not exe.exists():
        return f"hippo is not installed next to {sys.executable}: run `make install`"
    found = shutil.which("hippo", path=env.get("PATH"))
    if found and Path(found).resolve() == exe.resolve():
        return f"hippo is on your PATH: {found}"
    bin_dir = Path(env.get("HOME") or Path.home()) / ".local" / "bin"
    on_path = any(Path(p).expanduser() == bin_dir for p in env.get("PATH", "").split(os.pathsep) if p)
    link = bin_dir / "hippo"
    if on_path and (not link.exists() or link.is_symlink()) and not link.is_dir():
        bin_dir.mkdir(parents=True, exist_ok=True)
        if link.is_symlink():
            link.unlink()
        link.symlink_to(exe)
        return f"hippo is on your PATH: {link} -> {exe}"
    folder = shlex.quote(str(exe.parent))
    return (
        f"hippo is not on your PATH; add this line to your shell's startup file (~/.bashrc, ~/.zshrc): "
        f'export PATH={folder}:"$PATH"'
    )


def ui_command() -> str:
    """How to open the Dagster UI from any folder: the clone's `make ui` by its path."""
    repo = Path(__file__).resolve().parents[1]
    if (repo / "Makefile").is_file():
        return f"make -C {shlex.quote(str(repo))} ui"
    return "dagster dev -m hippo_assets.definitions"


def next_steps() -> str:
    """What to try after `make run`: every line runs as printed, from any folder."""
    hippo = hippo_command()
    try:
        vault = str(HippoSettings.from_env().vault.expanduser().resolve())
    except ConfigFileError:
        vault = "the vault"
    ui = ui_command()
    rows = [
        (f"{hippo} serve", "the librarian: REST + MCP for agents, and fast `hippo search`"),
        (f'{hippo} search "your question"', f"hybrid search of {vault}"),
        (ui, "the Dagster UI: assets, runs, checks, schedules, sensors"),
        (
            f"{hippo} mcp install claude-code",
            "let Claude Code search the vault (also codex, cursor, claude-desktop)",
        ),
    ]
    width = max(len(cmd) for cmd, _ in rows) + 2
    lines = ["Next, try:"]
    lines += [f"  {i}. {cmd:{width}s} {what}" for i, (cmd, what) in enumerate(rows, 1)]
    lines.append(f"  Your own notes: {hippo} init ~/MyVault   (lists what it adds; --yes applies)")
    lines.append(f"  Edits re-indexed within seconds: {hippo} watch")
    lines.append(f"  Something off? {hippo} doctor")
    return "\n".join(lines)


# --- `hippo config` -------------------------------------------------------------------------------------
def cmd_config(args: argparse.Namespace) -> int:
    if args.action == "set":
        values = {k: getattr(args, k) for k in CONFIG_FIELDS if getattr(args, k, None) is not None}
        if not values:
            print("hippo config set: give --vault, --home or --dagster-home", file=sys.stderr)
            return 2
        print(f"Remembered in {write_config(values)}")
        return 0
    if args.action == "link":
        print(link_into_path())
        print()
        print(next_steps())
        return 0
    path = config_path()
    try:
        settings = HippoSettings.from_env()
    except ConfigFileError as exc:
        print(f"hippo config: {exc}", file=sys.stderr)
        return 2
    if args.action == "get":
        if args.field is None:
            print(f"hippo config get: name one of {', '.join(CONFIG_FIELDS)}", file=sys.stderr)
            return 2
        value = getattr(settings, args.field)
        print("" if value is None else Path(value).expanduser().resolve())
        return 0 if value is not None else 1
    print(f"config file: {path}{'' if path.is_file() else ' (none yet: `hippo init VAULT` writes it)'}")
    for field in CONFIG_FIELDS:
        value = getattr(settings, field)
        shown = "(unset)" if value is None else Path(value).expanduser().resolve()
        print(f"  {field:13s} {shown}  [{settings.source_of(field)}]")
    return 0


def add_config_command(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "config", help="the remembered vault, home and Dagster home (show, get, set), and `link` onto PATH"
    )
    p.add_argument("action", nargs="?", default="show", choices=["show", "get", "set", "link"])
    p.add_argument("field", nargs="?", choices=list(CONFIG_FIELDS), help="for `get`")
    p.add_argument("--vault", type=Path, help="for `set`: the vault")
    p.add_argument("--home", type=Path, help="for `set`: the derived stores folder")
    p.add_argument("--dagster-home", dest="dagster_home", type=Path, help="for `set`: the Dagster home")
    p.set_defaults(func=cmd_config)
