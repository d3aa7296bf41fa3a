"""`python -m reso.evals.cli …` runs the `reso` command (for `-X importtime`, or without the script)."""

from reso.evals.cli.main import app

app()
