"""Domain `work`: the ghost layer's nightly promotion of approved shared memories (seed S1)."""

GROUP = "ghost"
