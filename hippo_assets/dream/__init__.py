"""Domain `dream`: the nightly dream (seed S4) — gate, knowledge lint by layer, consolidation, the interest
profile and the digest a person reads in `50-ops/digest/`."""

GROUP = "dream"
