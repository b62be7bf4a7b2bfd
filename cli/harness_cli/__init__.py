"""The `harness` command line (installed as the `harness_cli` package): thin click front end."""
