"""The local PostgreSQL fixtures of the work-memory tests (a throwaway schema per test)."""

from tests.work.conftest import pg_available, pg_schema  # noqa: F401 - fixtures
