"""Domain `memory`: agent conversations loaded by dlt (one asset per format), shaped into conversation chunks."""

GROUP = "memory"
