"""Run and sweep reports: the accuracy interval in report.md, a self-contained report.html that escapes
what runs wrote, names models (never this machine's replay paths) and lists items by id, the DAG's layered
layout, labels that tell runs apart and name a single model's run by its model, a heatmap of at most the top
models and "others", and the sweep's paired intervals against the best single model."""

from __future__ import annotations

import re

from reso.evals.reports.cost_plot import CostPoint, pareto_front
from reso.evals.reports.dag_svg import dag_svg, layers
from reso.evals.reports.report import write_run_report, write_sweep_report
from reso.evals.reports.run_labels import method_kind, run_labels
from tests.run_fixtures import pattern_run, result_row, write_run


def test_run_report_shows_the_interval_and_writes_a_self_contained_page(tmp_path):
    run = pattern_run(tmp_path / "run", "1101", method="reso")
    markdown = write_run_report(run).read_text()
    assert "| 4 | 75.0% | 30.1% – 95.4% |" in markdown and "report.html" in markdown
    page = (run / "report.html").read_text()
    assert '<b id="accuracy">75.0%</b>' in page and "30.1% – 95.4%" in page
    assert "data:image/png;base64," in page  # the heatmap, embedded
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", page)  # nothing fetched from anywhere
    assert page.count('<details class="item') == 4
    assert page.count('class="step ') == 12  # three steps per item, drawn as SVG nodes


def test_html_escapes_every_text_from_the_run(tmp_path):
    hostile = "<script>alert('x')</script>"
    row = result_row("q<0>", True, answer=hostile, agent="<img src=x onerror=alert(1)>")
    row["notes"] = ["<b>note</b>"]
    run = write_run(tmp_path / "run", [row], method="reso", dataset="<i>set</i>")
    write_run_report(run)
    page = (run / "report.html").read_text()
    assert "<script>" not in page and "<img src=x" not in page and "<b>note</b>" not in page
    assert "<i>set</i>" not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    assert 'id="item-q&lt;0&gt;"' in page


def test_oracle_is_labelled_as_using_the_labels_everywhere(tmp_path):
    run = pattern_run(tmp_path / "oracle", "11", method="oracle")
    assert "# oracle (uses labels) on fixture" in write_run_report(run).read_text()
    assert "<h1>oracle (uses labels) on fixture (test)</h1>" in (run / "report.html").read_text()
    pattern_run(tmp_path / "single", "10", method="single:model-a")
    assert "| oracle | oracle (uses labels) |" in write_sweep_report(tmp_path).read_text()


def test_layers_follow_the_longest_chain_and_ignore_unknown_or_cyclic_dependencies():
    steps = [{"id": "a", "depends_on": []}, {"id": "b", "depends_on": ["a"]},
             {"id": "c", "depends_on": ["a", "b", "zz"]},
             {"id": "d", "depends_on": ["e"]}, {"id": "e", "depends_on": ["d"]}]
    assert layers(steps)["a"] == 0 and layers(steps)["b"] == 1 and layers(steps)["c"] == 2
    assert sorted([layers(steps)["d"], layers(steps)["e"]]) == [0, 1]


def test_dag_svg_draws_a_node_per_step_and_an_arrow_per_dependency():
    svg = dag_svg(result_row("q", False)["steps"])
    assert svg.count("<g class=\"step ") == 3 and svg.count("<line ") == 2
    assert 'class="step bad" data-step="final"' in svg and 'class="step ok" data-step="a"' in svg
    assert dag_svg([]) == ""


def test_labels_tell_runs_of_one_method_apart_by_the_settings_that_differ():
    def summary(method, run, **settings):
        return {"method": method, "method_label": method, "run": run,
                "settings": {"k": 2, "cost_weight": 1.0, "db": run, **settings}}

    labels = run_labels([summary("reso", "a"), summary("reso", "b", cost_weight=0.25),
                         summary("reso", "c", k=3, scorer="small:/x/runs/crm"), summary("single:m", "d"),
                         summary("random", "e"), summary("random", "f")])
    assert labels[:3] == ["reso (k=2, cost_weight=1, scorer=None)", "reso (k=2, cost_weight=0.25, scorer=None)",
                          "reso (k=3, cost_weight=1, scorer=small:crm)"]
    assert labels[3:] == ["single:m", "random [e]", "random [f]"]
    assert [method_kind(m) for m in ("reso", "single:m", "oracle", "vote:3", "cascade:a>b")] == [
        "reso", "single", "oracle", "baseline", "baseline"]


def test_pareto_front_keeps_the_points_nothing_beats():
    points = [CostPoint("a", "single", 1.0, 0.5), CostPoint("b", "single", 2.0, 0.4),
              CostPoint("c", "single", 3.0, 0.7), CostPoint("d", "single", 0.5, 0.3)]
    assert [p.label for p in pareto_front(points)] == ["d", "a", "c"]


def test_sweep_report_gives_paired_intervals_against_the_best_single_model(tmp_path):
    pattern_run(tmp_path / "weak", "1000000000", method="single:model-b", cost=0.001)
    pattern_run(tmp_path / "strong", "1111100000", method="single:model-a", cost=0.02)
    pattern_run(tmp_path / "same", "1111100000", method="reso", cost=0.04)
    pattern_run(tmp_path / "train", "11", method="reso", mode="train")
    report = write_sweep_report(tmp_path).read_text()
    assert "## Against the best single model (single:model-a)" in report
    assert "On the 10 items every run shares" in report
    assert "| same | reso | 50.0% | +0.0 pt | +0.0 to +0.0 pt | 2.00× | 2.00× – 2.00× |" in report
    assert "| weak | single:model-b | 10.0% | -40.0 pt |" in report
    assert (tmp_path / "accuracy_vs_cost.png").stat().st_size > 0


def test_sweep_report_says_why_there_is_no_paired_comparison(tmp_path):
    pattern_run(tmp_path / "a", "10", method="single:model-a")
    write_run(tmp_path / "b", [result_row("other", True)], method="reso")
    assert "No paired comparison: no item is shared by all the runs." in write_sweep_report(tmp_path).read_text()


REPLAY = "replay:/home/me/checkout/agents/data/math_l5_dev.jsonl.gz,/home/me/checkout/agents/data/gsm8k_dev.jsonl.gz"


def _replayed(row: dict, model: str) -> dict:
    for step in row["steps"]:
        for candidate in step["candidates"]:
            if candidate["agent_id"] != "tool/calculator":
                candidate["model"] = f"{REPLAY}#{model}"
    return row


def test_the_page_names_models_and_replay_files_never_this_machines_paths_and_sorts_items(tmp_path):
    rows = [_replayed(result_row(item, True), "claude-3-5-sonnet-20240620") for item in ("q10", "q2", "q1")]
    run = write_run(tmp_path / "run", rows, method="reso")
    write_run_report(run)
    page = (run / "report.html").read_text()
    agents = page[page.index("<h2>Agents</h2>"):page.index("<h2>Items")]
    assert "<td>model-a</td><td><code>claude-3-5-sonnet-20240620</code></td>" in agents
    assert "<code>math_l5_dev.jsonl.gz</code>, <code>gsm8k_dev.jsonl.gz</code>" in agents
    assert "/home/me" not in page and "replay:" not in page
    assert re.findall(r'id="item-(q\d+)"', page) == ["q1", "q2", "q10"]
    assert "Command: <code>reso eval --method reso</code>" in page


def test_the_heatmap_groups_many_agents_by_model_then_keeps_the_top_ones_and_others():
    from collections import Counter

    from reso.evals.reports.report import HEATMAP_COLUMNS, heatmap_choices

    few = {"algebra": Counter({"a/x": 3, "b/x": 1})}
    assert heatmap_choices(few, {}) == ("Agent", few)
    # 4 roles of 5 models: 20 agents, 5 models.
    models = {f"m{m}/r{r}": f"model-{m}" for m in range(5) for r in range(4)}
    choices = {"algebra": Counter({agent: 1 for agent in models}), "integration": Counter({"m0/r0": 2})}
    shown, grouped = heatmap_choices(choices, models)
    assert shown == "Model" and grouped["algebra"] == Counter({f"model-{m}": 4 for m in range(5)})
    assert grouped["integration"] == Counter({"model-0": 2})
    # 30 models, model k chosen k times: the 12 most chosen, the rest summed as "others".
    models = {f"m{k}/r": f"model-{k:02d}" for k in range(1, 31)}
    shown, top = heatmap_choices({"algebra": Counter({f"m{k}/r": k for k in range(1, 31)})}, models)
    assert len(top["algebra"]) == HEATMAP_COLUMNS + 1
    assert top["algebra"]["model-30"] == 30 and top["algebra"]["others"] == sum(range(1, 19))
    assert "model-18" not in top["algebra"] and "model-19" in top["algebra"]


def test_a_training_report_of_many_agents_draws_at_most_the_top_models_and_others(tmp_path, monkeypatch):
    import reso.evals.reports.report as report

    rows = [_replayed(result_row(f"q{k}", True, agent=f"m{k}/r{k % 3}"), f"model-{k}") for k in range(20)]
    run = write_run(tmp_path / "train", rows, method="reso", mode="train")
    drawn: dict = {}
    real = report.plot_heatmap

    def spy(choices, path, title="") -> None:
        drawn.update(choices=choices, title=title)
        real(choices, path, title)

    monkeypatch.setattr(report, "plot_heatmap", spy)
    markdown = write_run_report(run).read_text()
    columns = {name for counter in drawn["choices"].values() for name in counter}
    assert drawn["title"] == "Model chosen per kind of subtask"
    assert len(columns) == report.HEATMAP_COLUMNS + 1 and "others" in columns
    assert "![model chosen per kind of subtask](agents_heatmap.png)" in markdown


def test_a_one_model_method_is_labelled_by_its_model_whatever_names_it():
    from reso.agents.pool_source import load_pool_for
    from reso.evals.methods import parse_method

    pool = load_pool_for(None)  # the default pool: agents model/role over recorded answers
    single = parse_method("single:gpt-4o/algebra", pool)
    assert (single.name, single.label) == ("single:gpt-4o/algebra", "single:gpt-4o-2024-08-06")
    assert parse_method("single:gpt-4o-2024-08-06", pool).label == "single:gpt-4o-2024-08-06"
    assert parse_method("cot-sc:llama-3.1-8b:3", pool).label == "cot-sc:Meta-Llama-3.1-8B-Instruct:3"


def test_the_integration_step_is_the_one_nothing_depends_on_whatever_its_id() -> None:
    from reso.evals.reports.report import agent_choices

    planned = {"steps": [{"id": "1", "agent": "a", "depends_on": []}, {"id": "2", "agent": "a", "depends_on": []},
                         {"id": "3", "agent": "calc", "depends_on": ["1", "2"]}]}
    lone = {"steps": [{"id": "final", "agent": "b", "depends_on": []}]}
    assert agent_choices([planned, lone]) == {"sub-question": {"a": 2, "b": 1}, "integration": {"calc": 1}}
