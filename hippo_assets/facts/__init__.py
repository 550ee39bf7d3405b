"""Domain `facts`: temporal facts taken from the vault, documents, conversations and work memory; the
supersession review in 30-reviews/facts/ (issue 24)."""

GROUP = "facts"
