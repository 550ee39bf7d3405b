"""The `hippo` command line."""
