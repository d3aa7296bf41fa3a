"""Terminal tables a person reads at 80 columns: `reso pool show` and `reso compare` keep every model's name
whole (no replay path, nothing cut short) and every column in view."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from reso.agents.defaults import zeroeval_pool_path
from reso.agents.pool_source import load_pool_for
from reso.evals.cli.compare import comparison_table
from reso.evals.cli.pool import pool_table
from reso.evals.reports.compare import compare_runs, load_run
from reso.evals.reports.run_labels import breakable
from tests.run_fixtures import result_row, write_run


def _render(renderable, width: int = 80) -> str:
    console = Console(width=width, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def test_pool_show_keeps_every_model_name_whole_at_80_columns():
    data = zeroeval_pool_path().parent
    pool = load_pool_for(f"replay:{data / 'math_l5_dev.jsonl.gz'},{data / 'gsm8k_dev.jsonl.gz'}")
    text = _render(pool_table(pool))
    lines = text.splitlines()
    assert max(map(len, lines)) <= 80
    names = {agent.model.model_name for agent in pool}
    assert len(names) > 40
    for name in names:
        assert any(name in line for line in lines), name
    assert str(data) not in text and "replay:" not in text and "…" not in text
    assert "recorded in math_l5_dev.jsonl.gz, gsm8k_dev.jsonl.gz" in " ".join(text.split())


def _single(folder: Path, model: str, *, agent: str, correct: bool = True) -> Path:
    rows = [result_row(f"q{i}", correct, agent=agent) for i in range(3)]
    for row in rows:
        for step in row["steps"]:
            for candidate in step["candidates"]:
                if candidate["agent_id"] == agent:
                    candidate["model"] = f"replay:/home/me/checkout/agents/data/math_l5_dev.jsonl.gz#{model}"
    return write_run(folder, rows, method=f"single:{agent}", method_label=f"single:{model}")


def test_compare_keeps_every_model_name_and_every_column_at_80_columns(tmp_path):
    runs = [_single(tmp_path / "a", "claude-3-5-sonnet-20240620", agent="claude-3-5-sonnet/algebra"),
            _single(tmp_path / "b", "Meta-Llama-3.1-70B-Instruct", agent="llama-3-1-70b/algebra", correct=False),
            write_run(tmp_path / "c", [result_row(f"q{i}", True) for i in range(3)],
                      method="cascade:Meta-Llama-3.1-70B-Instruct,gpt-4o-mini-2024-07-18>claude-3-5-sonnet-20240620")]
    text = _render(comparison_table(compare_runs([load_run(run) for run in runs]), width=80))
    lines = text.splitlines()
    assert max(map(len, lines)) <= 80
    for name, runs in (("claude-3-5-sonnet-20240620", 2), ("Meta-Llama-3.1-70B-Instruct", 2),
                       ("gpt-4o-mini-2024-07-18", 1)):
        assert sum(name in line for line in lines) == runs, name  # whole, in its own run and in the cascade
    for header in ("accuracy", "Δ pt", "cost ratio", "tokens"):
        assert header in text
    assert "/home/me" not in text and "/algebra" not in text and "…" not in text
    assert "-100.0" in text  # the last column but one, the difference against the reference, is shown


def test_method_labels_break_between_models():
    assert breakable("cascade:a,b>c") == "cascade: a, b > c"
    assert breakable("single:o1-mini") == "single: o1-mini"
    assert breakable("reso (k=2, cost_weight=1)") == "reso (k=2, cost_weight=1)"
    assert breakable("vote:3") == "vote:3"


def test_the_demo_table_wraps_a_cascade_between_its_models_instead_of_cutting_it():
    from reso.evals.cli.demo_tables import all_items_table

    row = {"method": "cascade:Meta-Llama-3.1-70B-Instruct,gpt-4o-mini-2024-07-18>claude-3-5-sonnet-20240620",
           "n": 100, "accuracy": 0.89, "accuracy_ci95": [0.814, 0.937], "diff_vs_best_single": -0.02,
           "diff_vs_best_single_ci95": [-0.06, 0.02], "cost_usd": 0.186, "cost_vs_best_single": 0.31}
    text = _render(all_items_table("GSM8K", [row]), width=132)
    assert "…" not in text
    for name in ("Meta-Llama-3.1-70B-Instruct", "gpt-4o-mini-2024-07-18", "claude-3-5-sonnet-20240620"):
        assert name in text
