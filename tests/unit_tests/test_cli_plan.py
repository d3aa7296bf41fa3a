"""`reso plan`: the plan as JSON or a table, from an argument, a file or standard input; bad input exits 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from langchain_core.messages import AIMessage
from typer.testing import CliRunner

from reso.evals.cli import plan as cli_plan
from reso.evals.cli.plan import plan_command
from reso.graphs.planners import NO_MODEL_NOTE, StructuralPlanner
from tests.fakes import ScriptedChatModel

MAS_QUESTION = (
    "The following is a complex question composed of multiple sub-questions:\n\n"
    "Let $n = UNK_0(a constant calculated by adding the sum of Answer[1] to the number (2.00). )$.\n"
    "Find \\[n^2\\].. The answer is recorded as Answer[0]\n\n"
    "Compute $942.0 / 2$.. The answer is recorded as Answer[1]\n\n"
    "Please use the answers to the above questions to perform the following calculations:\n"
    "Please calculate the value of Answer[0]*Answer[1]."
)
PLAIN = "What is 17 * 23?"
VALID = [
    {"id": "a", "instruction": "Compute 17 * 20.", "depends_on": []},
    {"id": "b", "instruction": "Add 17 * 3 to Answer[a].", "depends_on": ["a"]},
]


def make_app() -> typer.Typer:
    app = typer.Typer()
    app.command("plan")(plan_command)

    @app.callback()
    def root() -> None:
        """Keep `plan` a sub-command, as under the real root app."""

    return app


def run(*args: str, stdin: str | None = None):
    return CliRunner().invoke(make_app(), ["plan", *args], input=stdin, env={"COLUMNS": "200"})


def test_json_plan_of_a_mas_question_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "question.txt"
    path.write_text(MAS_QUESTION, encoding="utf-8")
    result = run("--file", str(path), "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == {"plan": StructuralPlanner().plan(MAS_QUESTION).to_steps()}
    assert json.loads(result.stdout)["plan"][0]["depends_on"] == ["1"]
    assert "note: planner: structural" in result.stderr


@pytest.mark.parametrize("args", [("-",), ("--file", "-"), ("-f", "-")])
def test_question_from_standard_input(args: tuple[str, ...]) -> None:
    result = run(*args, "--json", "--planner", "structural", stdin=MAS_QUESTION)
    assert result.exit_code == 0, result.stderr
    assert [step["id"] for step in json.loads(result.stdout)["plan"]] == ["0", "1", "final"]


def test_plain_question_without_a_model_is_one_step_with_a_note() -> None:
    result = run(PLAIN, "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {"plan": [{"id": "final", "instruction": PLAIN, "depends_on": []}]}
    assert f"note: {NO_MODEL_NOTE}" in result.stderr


def test_table_shows_steps_waves_and_raw_instruction_text() -> None:
    result = run(MAS_QUESTION)
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "3 steps in 3 waves" in out and "final step 'final'" in out
    assert "Find \\[n^2\\].. The answer is recorded as Answer[0]" in out
    assert out.index("Compute $942.0 / 2$") < out.index("Find \\[n^2\\]"), "rows follow topological order"


def test_the_root_app_serves_reso_plan() -> None:
    from reso.evals.cli import app

    result = CliRunner().invoke(app, ["plan", "-", "--json"], input=PLAIN)
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["plan"][0]["instruction"] == PLAIN
    table = CliRunner().invoke(app, ["plan", PLAIN], env={"COLUMNS": "200"})
    assert "1 step in 1 wave," in table.stdout


def test_llm_planner_with_a_model(monkeypatch: pytest.MonkeyPatch) -> None:
    model = ScriptedChatModel(script=[
        "not json",
        AIMessage(content="", tool_calls=[{"name": "Plan", "args": {"steps": VALID}, "id": "c1"}]),
    ])
    loaded: list[str] = []

    def fake_load(spec: str) -> ScriptedChatModel:
        loaded.append(spec)
        return model

    monkeypatch.setattr(cli_plan, "_load_model", fake_load)
    result = run(PLAIN, "--planner", "llm", "--planner-model", "openai:gpt-4o-mini", "--json")
    assert result.exit_code == 0, result.stderr
    assert loaded == ["openai:gpt-4o-mini"]
    assert json.loads(result.stdout) == {"plan": VALID}
    assert "note: planner: llm" in result.stderr
    assert "note: attempt 1:" in result.stderr


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        ((), None, "no question given"),
        (("-",), "   \n", "the question in standard input is empty"),
        ((PLAIN, "--file", "q.txt"), None, "either as an argument or with --file"),
        (("--file", "does-not-exist.txt"), None, "cannot read question file does-not-exist.txt"),
        ((PLAIN, "--planner", "magic"), None, "unknown planner 'magic'; choose one of auto, structural, llm"),
        ((PLAIN, "--planner", "structural"), None, "not in the MAS benchmark format"),
        ((PLAIN, "--planner", "llm"), None, "the llm planner needs a chat model"),
        ((PLAIN, "--planner-model", "no-colon"), None, "--planner-model 'no-colon' is not a model spec"),
    ],
)
def test_bad_input_exits_2_with_one_line(args: tuple[str, ...], stdin: str | None, message: str) -> None:
    result = run(*args, stdin=stdin)
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]


def test_a_model_that_cannot_load_exits_2_with_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "no-model-here"  # a real loading failure, offline
    result = run(PLAIN, "--planner", "llm", "--planner-model", f"local:{missing}")
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"error: cannot load --planner-model 'local:{missing}': ModelLoadError: local:{missing}: no such file or folder"
    )
