"""The vault's shape: layout, the frontmatter contract, source copies, documents, what is ignored, fingerprints, governance."""
