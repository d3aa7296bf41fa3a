"""`reso solve` on the default offline pool (the twelve recorded models, with their trained DADB): the JSON
object, question sources, and the no-recording hint."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from reso.agents.defaults import default_pool_path
from reso.agents.pool import load_pool
from reso.evals.cli import app

JANET = ("Janet’s ducks lay 16 eggs per day. She eats three for breakfast every morning and bakes muffins for "
         "her friends every day with four. She sells the remainder at the farmers' market daily for $2 per fresh "
         "duck egg. How much in dollars does she make every day at the farmers' market?")
runner = CliRunner()


def _last_json(output: str) -> dict:
    return json.loads(output.strip().splitlines()[-1])


def test_solve_json_has_the_documented_fields():
    result = runner.invoke(app, ["solve", JANET, "--json"])
    assert result.exit_code == 0, result.output
    payload = _last_json(result.stdout)
    assert payload["answer"] == "18"
    assert payload["plan"] == [{"id": "final", "instruction": JANET, "depends_on": []}]
    step = payload["steps"][0]
    assert {"id", "agent", "answer", "candidates"} <= set(step)
    models = {agent.model.short_name for agent in load_pool(default_pool_path()) if agent.kind == "llm"}
    assert step["agent"].split("/")[0] in models
    # The recorded models answer (distinct base models, as many as pay at the default value of a right
    # answer); 188 prompt tokens each (the zero-shot JSON instruction the recordings were made with + question).
    asked = [c["agent_id"].split("/")[0] for c in step["candidates"]]
    assert asked and len(set(asked)) == len(asked) and set(asked) <= models
    assert all(c["input_tokens"] == 188 for c in step["candidates"])
    usage = payload["usage"]
    assert usage["total_tokens"] == sum(c["input_tokens"] + c["output_tokens"] for c in step["candidates"])
    assert usage["cost_usd"] > 0 and payload["latency_s"] > 0


def test_solve_reads_the_question_from_a_file_and_from_stdin(tmp_path):
    question_file = tmp_path / "q.txt"
    question_file.write_text(JANET, encoding="utf-8")
    from_file = runner.invoke(app, ["solve", "--file", str(question_file), "--json"])
    from_stdin = runner.invoke(app, ["solve", "-", "--json"], input=JANET)
    assert _last_json(from_file.stdout)["answer"] == "18"
    assert _last_json(from_stdin.stdout)["answer"] == "18"


def test_a_question_outside_the_recordings_names_how_to_configure_an_endpoint():
    result = runner.invoke(app, ["solve", "What is the airspeed velocity of an unladen swallow?", "--json"])
    assert result.exit_code == 1
    assert _last_json(result.stdout)["answer"] is None
    assert "no recorded answer to this question" in result.stderr and "--pool" in result.stderr
    assert "examples/pools/" in result.stderr


def test_off_a_terminal_the_progress_table_ends_its_line():
    result = runner.invoke(app, ["solve", JANET])
    assert result.exit_code == 0, result.output
    assert result.stderr.endswith("┘\n")  # the table's last line, then the answer on stdout: never glued
    assert result.stdout.startswith("answer: 18")


def test_empty_question_is_a_usage_error():
    result = runner.invoke(app, ["solve", "   "])
    assert result.exit_code == 2
    assert "no question given" in result.output


def test_the_first_progress_line_shows_before_the_team_is_built(monkeypatch):
    """On a terminal the team stage is drawn before the heavy work (building the team) starts; then the plan
    stage and the table follow, and the answer line is printed."""
    from io import StringIO

    from rich.console import Console

    import reso.graphs.team as team
    from reso.evals.bench.startup import visible_text
    from reso.evals.cli import progress
    from reso.evals.cli.solve import TEAM_STAGE

    screen = StringIO()
    monkeypatch.setattr(progress, "progress_console",
                        lambda *, quiet=False: Console(file=screen, force_terminal=True, width=120, quiet=quiet))
    shown_when_building: list[str] = []
    build = team.team_for

    def team_for(settings):
        shown_when_building.append(visible_text(screen.getvalue().encode("utf-8")))
        return build(settings)

    monkeypatch.setattr(team, "team_for", team_for)
    result = runner.invoke(app, ["solve", JANET])
    assert result.exit_code == 0, result.output
    assert len(shown_when_building) == 1 and TEAM_STAGE in shown_when_building[0]
    assert progress.PLANNING not in shown_when_building[0]
    drawn = visible_text(screen.getvalue().encode("utf-8"))
    assert drawn.index(TEAM_STAGE) < drawn.index(progress.PLANNING) < drawn.index("subtask")
    assert result.stdout.startswith("answer: 18  [done;")


def test_json_output_draws_no_progress(monkeypatch):
    from io import StringIO

    from rich.console import Console

    from reso.evals.cli import progress

    screen = StringIO()
    monkeypatch.setattr(progress, "progress_console",
                        lambda *, quiet=False: Console(file=screen, force_terminal=True, width=120, quiet=quiet))
    result = runner.invoke(app, ["solve", JANET, "--json"])
    assert _last_json(result.stdout)["answer"] == "18"
    assert screen.getvalue() == ""
