"""The one registry of conversation formats. Adding a format is one parser module and one row here.

Each format has one name; every other name is derived from it: the CLI kind (`hippo ingest claude-code`),
the dlt source, the Dagster asset and op, the job of `hippo ingest`, the dlt pipeline and dataset. The
asset and the dlt resource keep the names they had before this table (`*_log` for logs, `*_export` for
exports), so dlt's incremental state carries over.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from hippo_core.conversations import chatgpt, claude_ai, claude_code, codex
from hippo_core.conversations.models import Parsed

Reader = Literal["jsonl", "export"]


@dataclass(frozen=True)
class Format:
    name: str
    label: str  # for people: "Claude Code"
    reader: Reader  # jsonl: log files read incrementally by byte offset; export: whole export ZIPs
    parse: Callable[
        ..., Parsed
    ]  # jsonl: (rel, where, lines, state); export: (conversations.json data, where)
    files: tuple[str, ...]  # glob patterns under the location
    setting: str  # the HippoSettings field that holds the location (and its default)

    @property
    def cli_name(self) -> str:
        return self.name.replace("_", "-")

    @property
    def asset_name(self) -> str:
        """The Dagster asset key and the dlt resource name."""
        return f"{self.name}_{'log' if self.reader == 'jsonl' else 'export'}"

    @property
    def op_name(self) -> str:
        return f"{self.name}_ingest"

    @property
    def job_name(self) -> str:
        return f"{self.name}_job"

    @property
    def pipeline_name(self) -> str:
        return f"hippo_{self.name}"

    @property
    def dataset_name(self) -> str:
        return f"hippo_conversations_{self.name}"


FORMATS: tuple[Format, ...] = (
    Format(
        name="claude_code",
        label="Claude Code",
        reader="jsonl",
        parse=claude_code.parse_file,
        files=claude_code.FILES,
        setting="claude_projects",
    ),
    Format(
        name="codex",
        label="Codex",
        reader="jsonl",
        parse=codex.parse_file,
        files=codex.FILES,
        setting="codex_home",
    ),
    Format(
        name="chatgpt",
        label="ChatGPT",
        reader="export",
        parse=chatgpt.parse_chatgpt,
        files=chatgpt.FILES,
        setting="exports",
    ),
    Format(
        name="claude_ai",
        label="claude.ai",
        reader="export",
        parse=claude_ai.parse_claude_ai,
        files=claude_ai.FILES,
        setting="exports",
    ),
)
BY_NAME: dict[str, Format] = {f.name: f for f in FORMATS}
BY_CLI_NAME: dict[str, Format] = {f.cli_name: f for f in FORMATS}
