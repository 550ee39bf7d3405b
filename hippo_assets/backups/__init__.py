"""Domain `backups`: nightly snapshots of the stores the vault cannot rebuild, and their long-kept exports."""

GROUP = "backups"
