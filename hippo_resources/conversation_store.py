"""Where agent conversations come from and where dlt loads them (embedded parquet, or PostgreSQL).

One machine needs no server: dlt's `filesystem` destination writes parquet under HIPPO_HOME. When
HIPPO_PG_DSN is set, the same pipelines load into PostgreSQL instead. dlt keeps its incremental state
(file offsets, messages already loaded) in the destination, so it survives a lost working folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl
from dagster import ConfigurableResource

from hippo_core.conversations.formats import BY_NAME, FORMATS, Format

if TYPE_CHECKING:
    import dlt

SOURCES = tuple(fmt.name for fmt in FORMATS)  # the formats whose loads `read` gathers


class ConversationStore(ConfigurableResource):
    """Built by `build_resources` from the settings (HIPPO_CLAUDE_PROJECTS, HIPPO_CODEX_HOME, HIPPO_EXPORTS,
    HIPPO_PG_DSN), which hold the defaults."""

    root: str
    claude_projects: str
    codex_home: str
    exports: str
    pg_dsn: str | None = None

    @property
    def path(self) -> Path:
        return Path(self.root)

    def location(self, fmt: Format) -> str:
        """Where a format's files are: the field named like the format's setting."""
        return getattr(self, fmt.setting)

    def dataset(self, source: str) -> str:
        return BY_NAME[source].dataset_name

    def pipeline(self, source: str) -> dlt.Pipeline:
        """The dlt pipeline of one source format; its state lives with the data it loaded."""
        import dlt

        if self.pg_dsn:
            destination = dlt.destinations.postgres(credentials=self.pg_dsn)
        else:
            destination = dlt.destinations.filesystem(bucket_url=(self.path / "dlt").resolve().as_uri())
        return dlt.pipeline(
            pipeline_name=BY_NAME[source].pipeline_name,
            pipelines_dir=str(self.path / "pipelines"),
            destination=destination,
            dataset_name=self.dataset(source),
            progress="log",
        )

    def read(self, table: str, source: str | None = None) -> pl.DataFrame:
        """Every row dlt has loaded into `table` (all sources unless one is named); empty if none yet."""
        frames = []
        for src in [source] if source else SOURCES:
            frame = self._read_pg(src, table) if self.pg_dsn else self._read_files(src, table)
            if frame.height:
                frames.append(frame.with_columns(pl.lit(src).alias("_source_format")))
        return pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame()

    def _read_files(self, source: str, table: str) -> pl.DataFrame:
        folder = self.path / "dlt" / self.dataset(source) / table
        files = sorted(folder.glob("*.parquet")) if folder.is_dir() else []
        frames = [_as_text_times(pl.read_parquet(f)) for f in files]
        return pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame()

    def _read_pg(self, source: str, table: str) -> pl.DataFrame:
        import psycopg2

        with psycopg2.connect(self.pg_dsn) as conn, conn.cursor() as cur:
            cur.execute(
                "SELECT 1 FROM information_schema.tables WHERE table_schema = %s AND table_name = %s",
                (self.dataset(source), table),
            )
            if cur.fetchone() is None:
                return pl.DataFrame()
            cur.execute(f'SELECT * FROM "{self.dataset(source)}"."{table}"')
            cols = [d[0] for d in cur.description]
            rows = cur.fetchall()
        return _as_text_times(pl.DataFrame(rows, schema=cols, orient="row", infer_schema_length=None))


def _as_text_times(frame: pl.DataFrame) -> pl.DataFrame:
    """dlt types ISO strings as timestamps; the records keep them as ISO 8601 UTC text."""
    return frame.with_columns(
        pl.col(name).dt.convert_time_zone("UTC").dt.strftime("%Y-%m-%dT%H:%M:%S+00:00")
        if getattr(dtype, "time_zone", None)
        else pl.col(name).dt.strftime("%Y-%m-%dT%H:%M:%S+00:00")
        for name, dtype in frame.schema.items()
        if isinstance(dtype, pl.Datetime)
    )
