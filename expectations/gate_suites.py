"""The seven promotion gates as a Great Expectations suite over a per-card table of gate facts.

`hippo_core.wiki.gates.gate_row` builds one row per card: `card`, then `gate_<name>` (bool) and `why_<name>`
(reason) for each gate. The suite expects every `gate_<name>` to be True; the check metadata names
each failing card, gate and reason.
"""

from __future__ import annotations

from typing import Any

import polars as pl
from dagster import AssetCheckResult, MetadataValue

from expectations.runner import check_result
from hippo_core.wiki.gates import GATES

GATE_SCHEMA: dict[str, pl.DataType] = {"card": pl.Utf8()}
for _g in GATES:
    GATE_SCHEMA[f"gate_{_g}"] = pl.Boolean()
    GATE_SCHEMA[f"why_{_g}"] = pl.Utf8()


def gate_suite() -> list[Any]:
    import great_expectations.expectations as gxe  # heavy (seconds): imported when a check runs

    return [
        gxe.ExpectColumnValuesToNotBeNull(column="card"),
        gxe.ExpectColumnValuesToBeUnique(column="card"),
        *(gxe.ExpectColumnValuesToBeInSet(column=f"gate_{g}", value_set=[True]) for g in GATES),
    ]


def gate_frame(rows: list[dict[str, object]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=GATE_SCHEMA)


def failures(frame: pl.DataFrame) -> list[dict[str, str]]:
    """Which gate failed on which card, and why (one entry per failure)."""
    out = []
    for row in frame.iter_rows(named=True):
        for g in GATES:
            if row[f"gate_{g}"] is not True:
                out.append({"card": row["card"], "gate": g, "why": row[f"why_{g}"] or ""})
    return out


def gate_check(suite_name: str, frame: pl.DataFrame, extra: dict[str, Any] | None = None) -> AssetCheckResult:
    """Run the gate suite on the table; the metadata lists every failing (card, gate, why)."""
    return check_result(
        suite_name,
        frame,
        gate_suite(),
        {"gate_failures": MetadataValue.json(failures(frame)), "cards": frame.height, **(extra or {})},
    )
