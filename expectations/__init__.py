"""Great Expectations suites and the glue that runs them as Dagster asset checks."""

from expectations.runner import check_result

__all__ = ["check_result"]
