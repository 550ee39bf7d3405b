"""A small SQL store that runs on SQLite by default and on PostgreSQL when a DSN is given (no Dagster here).

The work store and the ghost store share it: one place knows how to connect, how to create a schema
once per process, and how `?` placeholders become psycopg2's `%s`. Each store keeps its own DDL for
both backends; the statements the stores send are plain SQL both understand.

`SqlAccess` holds the behaviour and imports nothing heavy, so the agent hooks (run at every session start)
can use a store without importing Dagster; `hippo_resources.sql_store.SqlStore` is the same behaviour as
a Dagster resource.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar, Literal

_READY: set[tuple[str, str]] = set()
_READY_LOCK = threading.Lock()
_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


class StoreError(RuntimeError):
    """The store cannot be reached or its schema cannot be created."""


def checked_schema(name: str) -> str:
    """A PostgreSQL schema name safe to put in SQL text: a plain lowercase identifier."""
    if not _SCHEMA_NAME.fullmatch(name):
        raise StoreError(f"pg_schema {name!r} is not a plain lowercase identifier")
    return name


def append_only_sqlite(table: str) -> str:
    """Triggers that make a SQLite table refuse UPDATE and DELETE (the audit tables)."""
    return "".join(
        f"CREATE TRIGGER IF NOT EXISTS {table}_no_{op.lower()} BEFORE {op} ON {table}\n"
        f"BEGIN SELECT RAISE(ABORT, '{table} is append-only'); END;\n"
        for op in ("UPDATE", "DELETE")
    )


def append_only_pg(table: str) -> str:
    """Triggers that make a PostgreSQL table refuse UPDATE, DELETE and TRUNCATE; `{schema}` is filled in
    later. The shared `refuse_change()` function comes with `PG_REFUSE_CHANGE`."""
    return (
        f"CREATE OR REPLACE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {{schema}}.{table}\n"
        "    FOR EACH ROW EXECUTE FUNCTION {schema}.refuse_change();\n"
        f"CREATE OR REPLACE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {{schema}}.{table}\n"
        "    FOR EACH STATEMENT EXECUTE FUNCTION {schema}.refuse_change();\n"
    )


PG_REFUSE_CHANGE = """
CREATE OR REPLACE FUNCTION {schema}.refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION '% is append-only', TG_TABLE_NAME; END $$;
"""


# The words in which the two backends' schemas differ; a store writes its tables once with these tokens.
_DIALECT = {
    "sqlite": {
        "{t}": "",
        "{id}": "INTEGER PRIMARY KEY AUTOINCREMENT",
        "{int64}": "INTEGER",
        "{blob}": "BLOB",
        "{real}": "REAL",
    },
    "postgres": {
        "{t}": "{schema}.",
        "{id}": "BIGSERIAL PRIMARY KEY",
        "{int64}": "BIGINT",
        "{blob}": "BYTEA",
        "{real}": "DOUBLE PRECISION",
    },
}


def dialect_ddl(tables: str, append_only: Sequence[str] = ()) -> tuple[str, str]:
    """(SQLite DDL, PostgreSQL DDL) from one table script written with `{t}` before each table name and
    `{id}`, `{int64}`, `{blob}`, `{real}` for the types; `append_only` tables get the refusing triggers."""

    def render(backend: str) -> str:
        out = tables
        for token, word in _DIALECT[backend].items():
            out = out.replace(token, word)
        return out

    sqlite = render("sqlite") + "".join(append_only_sqlite(t) for t in append_only)
    pg = render("postgres") + (
        PG_REFUSE_CHANGE + "".join(append_only_pg(t) for t in append_only) if append_only else ""
    )
    return sqlite, pg


class Tx:
    """One transaction: `rows`, `one` and `run` with `?` placeholders on either backend."""

    def __init__(self, conn: Any, postgres: bool) -> None:
        self.conn = conn
        self.postgres = postgres
        self.cur = conn.cursor()

    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s") if self.postgres else sql

    def run(self, sql: str, args: Sequence[Any] = ()) -> int:
        self.cur.execute(self._sql(sql), tuple(args))
        return self.cur.rowcount

    def rows(self, sql: str, args: Sequence[Any] = ()) -> list[dict[str, Any]]:
        self.cur.execute(self._sql(sql), tuple(args))
        if self.cur.description is None:
            return []
        cols = [d[0] for d in self.cur.description]
        return [dict(zip(cols, row, strict=True)) for row in self.cur.fetchall()]

    def one(self, sql: str, args: Sequence[Any] = ()) -> dict[str, Any] | None:
        found = self.rows(sql, args)
        return found[0] if found else None


class SqlAccess:
    """The store's behaviour over `path`, `pg_dsn`, `pg_schema` and `_conns`, which the subclass provides
    (`SqlStore` as resource fields; `plain(...)` for a process that must not import Dagster)."""

    # `path`, `pg_dsn`, `pg_schema` and `_conns` come from the subclass; declaring them here (even as
    # plain attributes) would clash with the resource's pydantic fields.
    path: str
    pg_dsn: str | None
    pg_schema: str

    SQLITE_DDL: ClassVar[str] = ""
    PG_DDL: ClassVar[str] = ""  # `{schema}` is replaced by the schema name

    @property
    def backend(self) -> Literal["sqlite", "postgres"]:
        return "postgres" if self.pg_dsn else "sqlite"

    @property
    def location(self) -> str:
        """Where the data lives, for messages and the backup registry (never the DSN's password)."""
        return f"postgres schema {self.pg_schema}" if self.pg_dsn else str(Path(self.path).resolve())

    def _connect(self) -> Any:
        if self.pg_dsn:
            import psycopg2

            checked_schema(self.pg_schema)
            try:
                return psycopg2.connect(self.pg_dsn, options=f"-c search_path={self.pg_schema}")
            except psycopg2.Error as exc:
                raise StoreError(f"cannot reach PostgreSQL: {str(exc).strip().splitlines()[0]}") from None
        if not self.path:
            raise StoreError(f"{type(self).__name__} has neither a SQLite path nor a PostgreSQL DSN")
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA busy_timeout = 30000")
        return conn

    def _ensure_schema(self, conn: Any) -> None:
        key = (type(self).__name__, self.location)
        if key in _READY:
            return
        with _READY_LOCK:
            if key in _READY:
                return
            if self.pg_dsn:
                with conn.cursor() as cur:
                    # Two processes creating the same tables at once would collide in pg_type.
                    cur.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (self.pg_schema,))
                    cur.execute(f"CREATE SCHEMA IF NOT EXISTS {self.pg_schema}")
                    cur.execute(self.PG_DDL.replace("{schema}", self.pg_schema))
                conn.commit()
            else:
                conn.execute("PRAGMA journal_mode = WAL")
                conn.executescript(self.SQLITE_DDL)  # every statement is IF NOT EXISTS
            self._after_schema(conn)
            _READY.add(key)

    def _after_schema(self, conn: Any) -> None:
        """Hook for a store that must seed rows once its tables exist."""

    def forget_schema(self) -> None:
        """Make the next connection check the schema again (after a restore replaced it)."""
        with _READY_LOCK:
            _READY.discard((type(self).__name__, self.location))

    def _conn(self) -> Any:
        conn = getattr(self._conns, "conn", None)
        if (
            conn is not None
            and getattr(self._conns, "key", None) == self.location
            and not getattr(conn, "closed", 0)
        ):
            return conn
        conn = self._connect()
        self._conns.conn, self._conns.key = conn, self.location
        return conn

    def close(self) -> None:
        """Close this thread's connection (the next call opens a new one)."""
        conn = getattr(self._conns, "conn", None)
        self._conns.conn = None
        if conn is not None:
            conn.close()

    @contextmanager
    def tx(self, write: bool = False) -> Iterator[Tx]:
        """A transaction. On SQLite a write takes the write lock at BEGIN, so writers queue up instead of
        failing mid-way; on PostgreSQL each store serialises its own writers with row locks."""
        conn = self._conn()
        postgres = self.pg_dsn is not None
        try:
            self._ensure_schema(conn)
            if not postgres:
                conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            tx = Tx(conn, postgres)
        except BaseException:
            self.close()  # a broken connection is not reused
            raise
        try:
            yield tx
        except BaseException:
            try:
                conn.rollback()
            except Exception:  # noqa: BLE001 - the connection itself failed
                self.close()
            raise
        else:
            conn.commit()
        finally:
            tx.cur.close()


class Plain:
    """Mixin for a store used outside Dagster: plain attributes instead of resource fields."""

    pg_schema = "hippo"

    def __init__(self, path: str = "", pg_dsn: str | None = None, pg_schema: str | None = None) -> None:
        self.path = path
        self.pg_dsn = pg_dsn
        if pg_schema:
            self.pg_schema = pg_schema
        self._conns = threading.local()
