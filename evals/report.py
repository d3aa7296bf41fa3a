"""Reports of evaluation runs: a markdown page per run and per sweep, with plots.

Per run (`DIR/report.md`): the summary, the agents chosen per kind of subtask (table and heatmap), and
for a training run its learning curve. Per sweep (`PARENT/report.md`): every run found in PARENT's
sub-folders side by side, and accuracy against cost.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def _rows(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / "results.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def step_kind(step: dict[str, Any]) -> str:
    """A subtask's kind for reports: its domain label, or integration / sub-question."""
    if step.get("domain"):
        return str(step["domain"])
    return "integration" if step["id"] == "final" else "sub-question"


def agent_choices(rows: Sequence[dict[str, Any]]) -> dict[str, Counter[str]]:
    """Kind of subtask → how often each agent's answer was kept."""
    choices: dict[str, Counter[str]] = defaultdict(Counter)
    for row in rows:
        for step in row["steps"]:
            choices[step_kind(step)][step.get("agent") or "(none)"] += 1
    return dict(choices)


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


def _plot_heatmap(choices: dict[str, Counter[str]], path: Path) -> None:
    plt = _pyplot()
    kinds = sorted(choices)
    agents = sorted({agent for counter in choices.values() for agent in counter})
    grid = [[choices[kind][agent] for agent in agents] for kind in kinds]
    fig, ax = plt.subplots(figsize=(1.2 + 0.9 * len(agents), 1.2 + 0.5 * len(kinds)))
    image = ax.imshow(grid, cmap="Blues", aspect="auto")
    ax.set_xticks(range(len(agents)), agents, rotation=45, ha="right")
    ax.set_yticks(range(len(kinds)), kinds)
    darkest = max((value for row in grid for value in row), default=0)
    for i, row in enumerate(grid):
        for j, value in enumerate(row):
            colour = "white" if darkest and value > darkest / 2 else "black"
            ax.text(j, i, str(value), ha="center", va="center", fontsize=8, color=colour)
    fig.colorbar(image, ax=ax, label="answers kept")
    ax.set_title("Agent chosen per kind of subtask")
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)


def _plot_curve(curve: list[tuple[int, float]], path: Path) -> None:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot([x for x, _ in curve], [y for _, y in curve])
    ax.set_xlabel("training items")
    ax.set_ylabel("sub-answers right (rolling)")
    ax.set_ylim(0, 1)
    ax.set_title("Learning curve")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_run_report(run_dir: Path) -> Path:
    """Write `run_dir/report.md` (and its plots) from the run's summary and results."""
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    rows = _rows(run_dir)
    choices = agent_choices(rows)
    lines = [
        f"# {summary['method']} on {summary['dataset']} ({summary['mode']})",
        "",
        "| items | accuracy | tokens / item | USD | mean latency (s) | failed items |",
        "| --- | --- | --- | --- | --- | --- |",
        f"| {summary['n']} | {summary['accuracy']:.1%} | {summary['tokens_per_item']:.0f} | "
        f"{summary['cost_usd']:.4f} | {summary['latency_s']:.2f} | {summary['failed_items']} |",
        "",
        f"Command: `{' '.join(summary['command'])}`  ",
        f"Seed: {summary['seed']}",
        "",
        "## Agents chosen per kind of subtask",
        "",
    ]
    for kind, counter in sorted(choices.items()):
        lines.append(f"- **{kind}**: " + ", ".join(f"{agent} {count}" for agent, count in counter.most_common()))
    if choices:
        _plot_heatmap(choices, run_dir / "agents_heatmap.png")
        lines += ["", "![agents per kind of subtask](agents_heatmap.png)"]
    if summary["mode"] == "train":
        curve = learning_curve(rows)
        if curve:
            _plot_curve(curve, run_dir / "learning_curve.png")
            lines += ["", "## Learning curve", "", "![learning curve](learning_curve.png)"]
    if summary.get("stopped"):
        lines += ["", f"**Stopped early:** {summary['stopped']} (the results above are partial)."]
    path = run_dir / "report.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def collect_summaries(parent: Path) -> list[dict[str, Any]]:
    """The summaries of every run directly under `parent`, with their folder names."""
    found = []
    for summary_path in sorted(parent.glob("*/summary.json")):
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
        found.append({**summary, "run": summary_path.parent.name})
    return found


def comparison_table(summaries: Sequence[dict[str, Any]]) -> list[str]:
    lines = ["| run | method | dataset | mode | n | accuracy | tokens / item | USD |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for s in summaries:
        lines.append(f"| {s['run']} | {s['method']} | {s['dataset']} | {s['mode']} | {s['n']} | "
                     f"{s['accuracy']:.1%} | {s['tokens_per_item']:.0f} | {s['cost_usd']:.4f} |")
    return lines


def write_sweep_report(parent: Path) -> Path:
    """Write `parent/report.md` and `parent/accuracy_vs_cost.png` over every run under `parent`."""
    summaries = collect_summaries(parent)
    tested = [s for s in summaries if s["mode"] == "test"] or summaries
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    for s in tested:
        ax.scatter(s["cost_per_item_usd"], s["accuracy"])
        ax.annotate(s["method"], (s["cost_per_item_usd"], s["accuracy"]), fontsize=8,
                    xytext=(4, 4), textcoords="offset points")
    ax.set_xlabel("USD per item")
    ax.set_ylabel("accuracy")
    ax.set_title("Accuracy against cost")
    fig.savefig(parent / "accuracy_vs_cost.png", dpi=120, bbox_inches="tight")
    plt.close(fig)
    lines = ["# Runs", "", *comparison_table(summaries), "", "![accuracy against cost](accuracy_vs_cost.png)"]
    path = parent / "report.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
