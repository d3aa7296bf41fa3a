"""Reports of evaluation runs: a markdown page per run and per sweep, with plots.

Per run (`DIR/report.md`, and the self-contained `DIR/report.html` with every item's DAG and candidates):
the summary with the accuracy's 95 % interval, the agents chosen per kind of subtask (table and heatmap),
and for a training run its learning curve. Per sweep (`PARENT/report.md`): every run found in PARENT's
sub-folders side by side, accuracy against cost, and when the runs share items, each run against the best
single model with paired intervals (`reso.evals.reports.compare`).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reso.agents.dadb.base import Mode
from reso.evals.reports.cost_plot import CostPoint, plot_accuracy_cost
from reso.evals.reports.formatting import command_text, interval_text
from reso.evals.reports.plots import NO_AGENT, OTHERS, plot_curve, plot_heatmap
from reso.evals.reports.run_labels import method_kind, method_label, run_labels

# The heatmap's columns, at most (and "others"): more stop being readable at a page's width.
HEATMAP_COLUMNS = 12


def _rows(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / "results.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def step_kind(step: dict[str, Any], steps: Sequence[dict[str, Any]]) -> str:
    """A subtask's kind for reports: its domain label, or integration / sub-question. The integration step is
    the one no other step of its row depends on, in a plan of several (as `TaskDAG.role` says), whatever its
    id; a one-step plan's lone step is the whole question, counted with the sub-questions."""
    if step.get("domain"):
        return str(step["domain"])
    needed = {parent for other in steps for parent in other.get("depends_on") or ()}
    return "integration" if len(steps) > 1 and step["id"] not in needed else "sub-question"


def agent_choices(rows: Sequence[dict[str, Any]]) -> dict[str, Counter[str]]:
    """Kind of subtask → how often each agent's answer was kept."""
    choices: dict[str, Counter[str]] = defaultdict(Counter)
    for row in rows:
        for step in row["steps"]:
            choices[step_kind(step, row["steps"])][step.get("agent") or NO_AGENT] += 1
    return dict(choices)


def agent_models(rows: Sequence[dict[str, Any]]) -> dict[str, str]:
    """Agent id → the name of its model, from the candidates of `rows`."""
    from reso.agents.profiles import model_name

    models: dict[str, str] = {}
    for row in rows:
        for step in row["steps"]:
            for candidate in step.get("candidates", []):
                spec = str(candidate.get("model") or "")
                if ":" in spec:
                    models.setdefault(str(candidate["agent_id"]), model_name(spec))
    return models


def heatmap_choices(choices: dict[str, Counter[str]], models: dict[str, str],
                    limit: int = HEATMAP_COLUMNS) -> tuple[str, dict[str, Counter[str]]]:
    """What the heatmap shows, at most `limit` + 1 columns: the agents when there are few; else their models
    (a pool crosses each model with several roles); else the `limit` most chosen of those and "others"."""
    agents = {agent for counter in choices.values() for agent in counter}
    if len(agents) <= limit:
        return "Agent", choices
    grouped: dict[str, Counter[str]] = {}
    for kind, counter in choices.items():
        grouped[kind] = Counter()
        for agent, count in counter.items():
            grouped[kind][models.get(agent, agent)] += count
    totals: Counter[str] = sum(grouped.values(), Counter())
    if len(totals) <= limit:
        return "Model", grouped
    kept = {name for name, _ in sorted(totals.items(), key=lambda pair: (-pair[1], pair[0]))[:limit]}
    top: dict[str, Counter[str]] = {}
    for kind, counter in grouped.items():
        top[kind] = Counter({name: count for name, count in counter.items() if name in kept})
        top[kind][OTHERS] = sum(count for name, count in counter.items() if name not in kept)
    return "Model", top


def learning_curve(rows: Sequence[dict[str, Any]], window: int = 50) -> list[tuple[int, float]]:
    """(items seen, share of sub-answers right over the last `window` items), in completion order."""
    curve = []
    recent: list[float] = []
    for index, row in enumerate(rows, start=1):
        judged = [step["correct"] for step in row["steps"] if step.get("correct") is not None]
        if not judged:
            continue
        recent.append(sum(judged) / len(judged))
        recent = recent[-window:]
        curve.append((index, sum(recent) / len(recent)))
    return curve


def _scorer_failure_lines(failures: dict[str, Any] | None) -> list[str]:
    """The CRM's failures, when it had any: how many of its scores failed, and the first reason."""
    if not failures or not failures.get("failed"):
        return []
    every = failures["failed"] == failures["scored"]
    head = "**Error: the CRM failed on every answer it scored**" if every else "**CRM failures**"
    return [f"{head}: {failures['failed']} of {failures['scored']} scores failed (first: `{failures['first']}`).", ""]


def write_run_report(run_dir: Path) -> Path:
    """Write `run_dir/report.md` and `run_dir/report.html` (and their plots) from the run's summary and
    results; returns the markdown page's path."""
    from reso.evals.reports.html_report import write_run_html

    rows = _rows(run_dir)
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    choices = agent_choices(rows)
    lines = [
        f"# {method_label(summary)} on {summary['dataset']} ({summary['mode']})",
        "",
        "| items | accuracy | 95 % interval (Wilson) | tokens / item | USD | mean latency (s) | failed items |",
        "| --- | --- | --- | --- | --- | --- | --- |",
        f"| {summary['n']} | {summary['accuracy']:.1%} | {interval_text(summary['accuracy_ci95'])} | "
        f"{summary['tokens_per_item']:.0f} | {summary['cost_usd']:.4f} | {summary['latency_s']:.2f} | "
        f"{summary['failed_items']} |",
        "",
        f"Command: `{command_text(summary['command'])}`  ",
        f"Seed: {summary['seed']}",
        "",
        "Every item, its DAG and its candidates: [report.html](report.html)",
        "",
        *_scorer_failure_lines(summary.get("scorer_failures")),
        "## Agents chosen per kind of subtask",
        "",
    ]
    figures: list[tuple[str, Path]] = []
    for kind, counter in sorted(choices.items()):
        lines.append(f"- **{kind}**: " + ", ".join(f"{agent} {count}" for agent, count in counter.most_common()))
    if choices:
        chosen, shown = heatmap_choices(choices, agent_models(rows))
        title = f"{chosen} chosen per kind of subtask"
        plot_heatmap(shown, run_dir / "agents_heatmap.png", title=title)
        lines += ["", f"![{title.lower()}](agents_heatmap.png)"]
        figures.append((title, run_dir / "agents_heatmap.png"))
    if summary["mode"] == Mode.TRAIN:
        curve = learning_curve(rows)
        if curve:
            plot_curve(curve, run_dir / "learning_curve.png")
            lines += ["", "## Learning curve", "", "![learning curve](learning_curve.png)"]
            figures.append(("Learning curve", run_dir / "learning_curve.png"))
    if summary.get("stopped"):
        lines += ["", f"**Stopped early:** {summary['stopped']} (the results above are partial)."]
    path = run_dir / "report.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    write_run_html(run_dir, summary, rows, figures)
    return path


def collect_summaries(parent: Path) -> list[dict[str, Any]]:
    """The summaries of every run directly under `parent`, with their folder names."""
    return [{**json.loads(summary_path.read_text(encoding="utf-8")), "run": summary_path.parent.name}
            for summary_path in sorted(parent.glob("*/summary.json"))]


def comparison_table(summaries: Sequence[dict[str, Any]]) -> list[str]:
    lines = ["| run | method | dataset | mode | n | accuracy | 95 % interval | tokens / item | USD |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for s in summaries:
        lines.append(f"| {s['run']} | {method_label(s)} | {s['dataset']} | {s['mode']} | {s['n']} | "
                     f"{s['accuracy']:.1%} | {interval_text(s['accuracy_ci95'])} | "
                     f"{s['tokens_per_item']:.0f} | {s['cost_usd']:.4f} |")
    return lines


def cost_points(summaries: Sequence[dict[str, Any]]) -> list[CostPoint]:
    """The accuracy–cost picture's points, one per summary, labelled apart by the settings that differ."""
    return [CostPoint(label, method_kind(s["method"]), s["cost_per_item_usd"], s["accuracy"], s["accuracy_ci95"])
            for s, label in zip(summaries, run_labels(summaries), strict=True)]


def paired_against_best_single(parent: Path, summaries: Sequence[dict[str, Any]]) -> list[str]:
    """Markdown lines: every run against the most accurate single model on the items all runs share, with
    paired intervals (`compare_runs`); a sentence saying why when there is no such comparison."""
    from reso.evals.reports.compare import CompareError, compare_runs, load_run, shared_ids

    singles = [i for i, s in enumerate(summaries) if method_kind(s["method"]) == "single"]
    if not singles:
        return ["No single-model run to compare against."]
    try:
        runs = [load_run(parent / s["run"]) for s in summaries]
    except CompareError as error:
        return [f"No paired comparison: {error}."]
    ids = shared_ids(runs)
    if not ids:
        return ["No paired comparison: no item is shared by all the runs."]
    best = max(singles, key=lambda i: sum(bool(runs[i].rows[item]["correct"]) for item in ids))
    comparison = compare_runs(runs, best)
    lines = [f"## Against the best single model ({comparison.runs[best].label})", "",
             f"On the {comparison.shared_items} items every run shares; {comparison.intervals_text()}, 95 % intervals.",
             "",
             "| run | method | accuracy | difference | its interval | cost ratio | its interval |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for stats in comparison.runs:
        pair = stats.vs_reference
        assert pair is not None
        ratio = f"{pair.cost_ratio:.2f}×" if pair.cost_ratio is not None else "–"
        ratio_ci = (f"{pair.cost_ratio_ci95[0]:.2f}× – {pair.cost_ratio_ci95[1]:.2f}×"
                    if pair.cost_ratio_ci95 else "–")
        lines.append(f"| {Path(stats.folder).name} | {stats.label} | {stats.accuracy:.1%} | "
                     f"{pair.accuracy_diff * 100:+.1f} pt | {interval_text(pair.accuracy_diff_ci95, signed=True)} | "
                     f"{ratio} | {ratio_ci} |")
    return lines


def write_sweep_report(parent: Path) -> Path:
    """Write `parent/report.md` and `parent/accuracy_vs_cost.png` over every run under `parent`."""
    summaries = collect_summaries(parent)
    tested = [s for s in summaries if s["mode"] == Mode.TEST] or summaries
    plot_accuracy_cost(cost_points(tested), parent / "accuracy_vs_cost.png")
    lines = ["# Runs", "", *comparison_table(summaries), "", "![accuracy against cost](accuracy_vs_cost.png)"]
    if len(tested) > 1:
        lines += ["", *paired_against_best_single(parent, tested)]
    path = parent / "report.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
