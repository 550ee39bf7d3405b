"""Domain `compile`: source copies become staging cards, judged and gated, then offered for approval."""

GROUP = "compile"
