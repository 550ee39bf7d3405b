"""The compile loop's rules: cards, gates, approvals, the compile queue, prompts, generated blocks, index pages, gaps."""
