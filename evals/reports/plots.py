"""A run's plots (matplotlib, written as PNG): agents chosen per kind of subtask and the learning curve. The
accuracy–cost picture of a sweep is `cost_plot.py`."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

OTHERS = "others"  # the heatmap's column of whatever did not get its own
NO_AGENT = "(none)"  # a subtask no agent answered


def pyplot():
    """matplotlib's pyplot on the file-only Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_heatmap(choices: dict[str, Counter[str]], path: Path, title: str = "Agent chosen per kind of subtask") -> None:
    """Counts per kind of subtask (rows) and agent or model (columns: the most chosen first, then no agent
    and "others")."""
    plt = pyplot()
    kinds = sorted(choices)
    totals = sum(choices.values(), Counter())
    agents = sorted(totals, key=lambda a: (a in (NO_AGENT, OTHERS), a == OTHERS, -totals[a], a.lower()))
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
    ax.set_title(title)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)


def plot_curve(curve: list[tuple[int, float]], path: Path) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot([x for x, _ in curve], [y for _, y in curve])
    ax.set_xlabel("training items")
    ax.set_ylabel("sub-answers right (rolling)")
    ax.set_ylim(0, 1)
    ax.set_title("Learning curve")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
