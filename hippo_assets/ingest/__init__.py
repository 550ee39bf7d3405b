"""Domain `ingest`: inbox files become immutable source copies in 10-sources/."""

GROUP = "ingest"
