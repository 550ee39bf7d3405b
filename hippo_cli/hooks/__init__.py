"""What agents run: the session hooks (`hippo hook claude-code|codex`), their installer and the
background step they spawn. Entry points only; the services they call are in `hippo_work/`."""
