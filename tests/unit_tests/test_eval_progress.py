"""`reso eval`'s progress bar: a resumed run starts at the items already done (a finished run at 20/20,
with their accuracy and cost), read from its results file without writing anything."""

from __future__ import annotations

import io

from rich.console import Console

from reso.evals.cli.progress_bar import EvalProgress, resumed_rows
from tests.run_fixtures import result_row, write_run


def _shown(bar: EvalProgress) -> str:
    console = Console(width=100, record=True, file=io.StringIO())
    console.print(bar._progress.make_tasks_table(bar._progress.tasks))
    return console.export_text()


def test_a_resumed_complete_run_starts_at_all_done(tmp_path):
    rows = [result_row(f"q{i}", i % 4 != 0, cost=0.01) for i in range(20)]
    run = write_run(tmp_path / "run", rows)
    ids = [f"q{i}" for i in range(20)]
    resumed = resumed_rows(run / "results.jsonl", ids)
    assert len(resumed) == 20 and not (run / "results.jsonl.lock").exists()  # read, nothing written
    bar = EvalProgress(total=20, label="reso on fixture", quiet=True, resumed=resumed)
    assert bar.completed == 20 and bar.correct == 15 and round(bar.cost, 4) == 0.2
    shown = _shown(bar)
    assert "20/20" in shown and "acc 75.0%  $0.2000" in shown


def test_a_resumed_run_counts_only_its_own_items_and_a_fresh_one_starts_at_zero(tmp_path):
    run = write_run(tmp_path / "run", [result_row(f"q{i}", True) for i in range(5)])
    assert [row["id"] for row in resumed_rows(run / "results.jsonl", {"q1", "q3", "q9"})] == ["q1", "q3"]
    assert resumed_rows(tmp_path / "none" / "results.jsonl", {"q1"}) == []
    assert not (tmp_path / "none").exists()
    (run / "results.jsonl").write_text("not json\n{}\n", encoding="utf-8")
    assert resumed_rows(run / "results.jsonl", {"q1"}) == []  # the run itself reports the damage
    bar = EvalProgress(total=5, label="x", quiet=True)
    bar.advance(result_row("q0", True))
    assert bar.completed == 1 and bar.done == 1


def test_reso_eval_rerun_on_a_finished_run_shows_every_item_done(tmp_path):
    from typer.testing import CliRunner

    from reso.agents.defaults import two_model_pool_path
    from reso.evals.cli import app

    args = ["eval", "--dataset", "gsm8k", "--limit", "3", "--method", "single:gpt-4/algebra", "--out",
            str(tmp_path / "run"), "--pool", str(two_model_pool_path())]
    first = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert first.exit_code == 0, first.stderr
    again = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert again.exit_code == 0, again.stderr
    # The rerun answers nothing: what its bar shows comes from the rows already there.
    assert "3/3 acc 66.7%" in again.stdout and "0/3" not in again.stdout, again.stdout
