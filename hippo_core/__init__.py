"""hippo_core."""
