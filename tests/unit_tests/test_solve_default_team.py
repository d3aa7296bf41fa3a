"""A fresh clone's first question: `reso solve` and the Python API, with nothing configured, answer a recorded
MATH level-5 question from the trained team shipped for the default pool (the twelve-model roster), offline
and without a word about an untrained DADB; plain arithmetic goes to the exact tool; a pool without a
trained DADB still says so."""

from __future__ import annotations

import json
import warnings

import pytest
from typer.testing import CliRunner

from reso.agents.defaults import two_model_pool_path
from reso.evals.cli import app
from reso.graphs.dadb_notice import UntrainedDADBWarning

# math-l5-531 of agents/data/math_l5_dev.jsonl.gz (answer 3); o1-mini, gpt-4o-mini and others record it.
MATH_L5 = "Compute $29^{13} - 5^{13}$ modulo 7."
# The untrained roster's first pick (selection with no record to go on) answered it wrong.
UNTRAINED_PICK = "gemma-2-2b"
ENV = {"RESO_DB_URL": "", "RESO_CHECKPOINT_URL": "", "COLUMNS": "200"}


def test_reso_solve_answers_a_recorded_math_question_from_the_trained_team() -> None:
    result = CliRunner().invoke(app, ["solve", MATH_L5, "--json"], env=ENV)
    assert result.exit_code == 0, result.output
    assert "DADB" not in result.stderr and "warning" not in result.stderr and "note:" not in result.stderr
    payload = json.loads(result.stdout.strip().splitlines()[-1])
    assert payload["answer"] == "3"
    (step,) = payload["steps"]
    assert not step["agent"].startswith(UNTRAINED_PICK)
    # Selection read a record: the chosen candidate's coarse-stage terms come from the trained DADB.
    assert any(c["selection"]["visits"] > 0 for c in step["candidates"] if c.get("selection")), step["candidates"]


def test_plain_arithmetic_goes_to_the_exact_tool() -> None:
    result = CliRunner().invoke(app, ["solve", "What is 17 times 23?"], env=ENV)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("answer: 391")
    assert "tool/calculator" in result.stderr


def test_the_python_api_warns_only_when_its_dadb_is_untrained() -> None:
    from reso.graphs.api import ReSo

    with warnings.catch_warnings():
        warnings.simplefilter("error", UntrainedDADBWarning)
        assert ReSo().solve(MATH_L5).answer == "3"
    with pytest.warns(UntrainedDADBWarning, match="no record was learned"):
        ReSo({"selection.embedder": "hash:64"}, pool=str(two_model_pool_path())).solve("What is 2 plus 2?")
