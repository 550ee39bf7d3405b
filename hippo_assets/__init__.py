"""hippo_assets."""
