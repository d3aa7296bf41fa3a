"""Run and sweep reports: the accuracy interval in report.md, a self-contained report.html that escapes
what runs wrote, the DAG's layered layout, labels that tell runs apart, and the sweep's paired intervals
against the best single model."""

from __future__ import annotations

import re

from reso.evals.reports.dag_svg import dag_svg, layers
from reso.evals.reports.html_report import render_run_html
from reso.evals.reports.plots import CostPoint, pareto_front
from reso.evals.reports.report import write_run_report, write_sweep_report
from reso.evals.reports.run_labels import ORACLE_LABEL, method_kind, run_labels
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
    from reso.evals.methods import ORACLE_LABEL as RUNNER_LABEL

    assert ORACLE_LABEL == RUNNER_LABEL
    run = pattern_run(tmp_path / "oracle", "11", method="oracle")
    assert "# oracle (uses labels) on fixture" in write_run_report(run).read_text()
    assert "<h1>oracle (uses labels) on fixture (test)</h1>" in (run / "report.html").read_text()
    pattern_run(tmp_path / "single", "10", method="single:model-a")
    assert "| oracle | oracle (uses labels) |" in write_sweep_report(tmp_path).read_text()


def test_layers_follow_the_longest_chain_and_ignore_unknown_or_cyclic_dependencies():
    steps = [{"id": "a"}, {"id": "b", "depends_on": ["a"]}, {"id": "c", "depends_on": ["a", "b", "zz"]},
             {"id": "d", "depends_on": ["e"]}, {"id": "e", "depends_on": ["d"]}]
    assert layers(steps)["a"] == 0 and layers(steps)["b"] == 1 and layers(steps)["c"] == 2
    assert sorted([layers(steps)["d"], layers(steps)["e"]]) == [0, 1]


def test_dag_svg_draws_a_node_per_step_and_an_arrow_per_dependency():
    svg = dag_svg(result_row("q", False)["steps"])
    assert svg.count("<g class=\"step ") == 3 and svg.count("<line ") == 2
    assert 'class="step bad" data-step="final"' in svg and 'class="step ok" data-step="a"' in svg
    assert dag_svg([]) == ""


def test_old_rows_without_dependencies_say_so():
    row = result_row("q", True)
    for step in row["steps"]:
        del step["depends_on"]
    page = render_run_html({"method": "reso", "dataset": "d", "mode": "test", "n": 1, "accuracy": 1.0,
                            "tokens_per_item": 1, "cost_usd": 0.0, "latency_s": 0.0, "failed_items": 0}, [row])
    assert "Dependencies were not recorded" in page and "<line " not in page


def test_labels_tell_runs_of_one_method_apart_by_the_settings_that_differ():
    def summary(method, run, **settings):
        return {"method": method, "run": run, "settings": {"k": 2, "cost_weight": 1.0, "db": run, **settings}}

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
