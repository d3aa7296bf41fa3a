"""`reso datasets` lists the names `reso eval --dataset` takes (its help points there)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from reso.evals.cli import app
from reso.evals.datasets import load_dataset


def test_datasets_json_lists_the_registered_names_that_eval_loads() -> None:
    result = CliRunner().invoke(app, ["datasets", "--json"])
    assert result.exit_code == 0, result.output
    names = json.loads(result.stdout)
    assert {"gsm8k-mas-easy-test", "math-l5-mas-easy-test", "gsm8k-l-mas-easy-train", "math-mas-easy"} <= set(names)
    assert "math_l5_dev.jsonl.gz" in names["math-l5-mas-easy-test"]
    assert len(load_dataset("gsm8k-mas-easy-test", limit=2)) == 2


def test_datasets_table_and_eval_help_name_the_command() -> None:
    table = CliRunner().invoke(app, ["datasets"], env={"COLUMNS": "200"})
    assert table.exit_code == 0 and "gsm8k-l-mas-hard-test" in table.stdout
    assert "reso datasets" in CliRunner().invoke(app, ["eval", "--help"], env={"COLUMNS": "200"}).stdout
