"""Domain `index`: the vault parsed into documents and chunks, embedded into Chroma and indexed by BM25."""

GROUP = "index"
