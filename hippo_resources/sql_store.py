"""`SqlStore`: the SQL store behaviour of `hippo_resources.sql_access` as a Dagster resource."""

from __future__ import annotations

import threading

from dagster import ConfigurableResource
from pydantic import PrivateAttr

from hippo_resources.sql_access import SqlAccess, StoreError, Tx, checked_schema, dialect_ddl

__all__ = ["SqlAccess", "SqlStore", "StoreError", "Tx", "checked_schema", "dialect_ddl"]


class SqlStore(SqlAccess, ConfigurableResource):
    """SQLite at `path`, or the schema `pg_schema` of the PostgreSQL database at `pg_dsn` when set."""

    path: str = ""
    pg_dsn: str | None = None
    pg_schema: str = "hippo"

    # One connection per thread, kept open: opening and closing per call would make every close the
    # last one, and SQLite checkpoints (and fsyncs) the WAL on the last close.
    _conns: threading.local = PrivateAttr(default_factory=threading.local)
