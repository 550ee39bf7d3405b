"""hippo_server."""
