"""The report plots (matplotlib, written as PNG): agents chosen per kind of subtask, the learning curve, and
accuracy against cost with intervals, the single models' Pareto front and labels that do not overlap."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Marker style per kind of method: single models, ReSo, other baselines.
_STYLES: dict[str, dict[str, Any]] = {
    "single": {"marker": "o", "color": "tab:blue", "label": "single model"},
    "reso": {"marker": "D", "color": "tab:red", "label": "ReSo"},
    "baseline": {"marker": "s", "color": "tab:gray", "label": "other baselines"},
    "oracle": {"marker": "s", "color": "tab:gray", "label": "other baselines", "mfc": "white"},
}
# Where a label may go: directions from its point (x, y), tried on rings of growing radius (points).
_DIRECTIONS = [(1, 0), (0.7, 0.7), (0.7, -0.7), (-1, 0), (-0.7, 0.7), (-0.7, -0.7), (0, 1), (0, -1)]
_RADII = (7, 16, 28, 42, 60)
MAX_LABEL_CHARS = 40


def pyplot():
    """matplotlib's pyplot on the file-only Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_heatmap(choices: dict[str, Counter[str]], path: Path) -> None:
    plt = pyplot()
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


@dataclass(frozen=True)
class CostPoint:
    """One run on the accuracy–cost picture."""

    label: str
    kind: str  # single | reso | baseline | oracle (see reso.evals.reports.run_labels.method_kind)
    cost_per_item_usd: float
    accuracy: float
    accuracy_ci95: Sequence[float] | None = None


def _plot_label(point: CostPoint, *, free: bool) -> str:
    """A point's label on the plot: without the `single:` the legend already says, cut to a readable length,
    marked "$0" for a free run drawn at the left edge of a log axis."""
    label = point.label.removeprefix("single:") if point.kind == "single" else point.label
    if len(label) > MAX_LABEL_CHARS:
        label = label[: MAX_LABEL_CHARS - 1] + "…"
    return f"{label} ($0)" if free else label


def pareto_front(points: Sequence[CostPoint]) -> list[CostPoint]:
    """The points no other point beats on both cost and accuracy, cheapest first."""
    front: list[CostPoint] = []
    for point in sorted(points, key=lambda p: (p.cost_per_item_usd, -p.accuracy)):
        if not front or point.accuracy > front[-1].accuracy:
            front.append(point)
    return front


def _place_labels(ax, fig, points: Sequence[CostPoint], xs: Sequence[float]) -> None:
    """Put each point's label where it overlaps no earlier label, marker or error bar and stays inside the
    axes, as near its point as that allows (a thin leader line joins a label set further off). Hand-written:
    a few dozen labels need no extra dependency such as adjustText, and this greedy pass is deterministic."""
    from matplotlib.transforms import Bbox

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    pixels = fig.dpi / 72  # points to pixels
    anchors = [ax.transData.transform((x, p.accuracy)) for x, p in zip(xs, points, strict=True)]
    obstacles = [_square(anchor, 5) for anchor in anchors]
    for x, point in zip(xs, points, strict=True):
        if point.accuracy_ci95:
            (bx, low), (_, high) = ax.transData.transform([(x, point.accuracy_ci95[0]), (x, point.accuracy_ci95[1])])
            obstacles.append(Bbox.from_extents(bx - 4, low, bx + 4, high))
    taken: list[Any] = []
    for i in sorted(range(len(points)), key=lambda i: -points[i].accuracy):
        probe = ax.text(0, 0, points[i].label, fontsize=8)
        extent = probe.get_window_extent(renderer)
        probe.remove()
        width, height = extent.width, extent.height
        best: tuple[float, float, float, Any] | None = None
        for radius in _RADII:
            for ux, uy in _DIRECTIONS:
                left = anchors[i][0] + ux * radius * pixels - (width if ux < 0 else width / 2 if ux == 0 else 0)
                bottom = anchors[i][1] + uy * radius * pixels - (height if uy < 0 else height / 2 if uy == 0 else 0)
                box = Bbox.from_bounds(left, bottom, width, height)
                cost = (10 * sum(_overlap(box, other) for other in taken)
                        + 2 * sum(_overlap(box, other) for other in obstacles)
                        + 20 * (width * height - _overlap(box, frame)) + radius)
                if best is None or cost < best[0]:
                    best = (cost, ux * radius, uy * radius, box)
        assert best is not None
        _, dx, dy, box = best
        ax.annotate(points[i].label, (xs[i], points[i].accuracy), xytext=(dx, dy), textcoords="offset points",
                    fontsize=8, ha="left" if dx > 0 else "right" if dx < 0 else "center",
                    va="bottom" if dy > 0 else "top" if dy < 0 else "center",
                    bbox={"boxstyle": "square,pad=0.1", "facecolor": "white", "edgecolor": "none", "alpha": 0.75},
                    arrowprops={"arrowstyle": "-", "color": "0.55", "lw": 0.6, "shrinkA": 0, "shrinkB": 4}
                    if abs(dx) + abs(dy) > _RADII[0] * 1.5 else None)
        taken.append(box)


def _square(centre: Sequence[float], half: float) -> Any:
    from matplotlib.transforms import Bbox

    return Bbox.from_extents(centre[0] - half, centre[1] - half, centre[0] + half, centre[1] + half)


def _overlap(a: Any, b: Any) -> float:
    width = min(a.x1, b.x1) - max(a.x0, b.x0)
    height = min(a.y1, b.y1) - max(a.y0, b.y0)
    return max(0.0, width) * max(0.0, height)


def plot_accuracy_cost(points: Sequence[CostPoint], path: Path, title: str = "Accuracy against cost") -> None:
    """Accuracy (with its interval) against USD per item on a log scale; the single models' Pareto front as
    a step line. Free runs (USD 0) stand at the left edge, marked "$0" in their label."""
    plt = pyplot()
    crowd = max(0, len(points) - 8)
    fig, ax = plt.subplots(figsize=(min(11.0, 7.5 + 0.2 * crowd), min(7.0, 4.8 + 0.12 * crowd)))
    paid = [p.cost_per_item_usd for p in points if p.cost_per_item_usd > 0]
    floor = min(paid) / 3 if paid else 1.0
    log = bool(paid)
    xs = [p.cost_per_item_usd if p.cost_per_item_usd > 0 or not log else floor for p in points]
    labelled = [CostPoint(_plot_label(p, free=log and p.cost_per_item_usd <= 0), p.kind, p.cost_per_item_usd,
                          p.accuracy, p.accuracy_ci95) for p in points]
    shown: set[str] = set()
    for x, point in zip(xs, labelled, strict=True):
        style = _STYLES.get(point.kind, _STYLES["baseline"])
        lo, hi = point.accuracy_ci95 or (point.accuracy, point.accuracy)
        legend = style["label"] if style["label"] not in shown else None
        shown.add(style["label"])
        ax.errorbar([x], [point.accuracy], yerr=[[point.accuracy - lo], [hi - point.accuracy]],
                    fmt=style["marker"], color=style["color"], mfc=style.get("mfc", style["color"]),
                    ecolor=style["color"], elinewidth=1, capsize=3, markersize=6, label=legend, zorder=3)
    singles = [(x, p) for x, p in zip(xs, labelled, strict=True) if p.kind == "single"]
    if len(singles) > 1:
        front = pareto_front([p for _, p in singles])
        place = {id(p): x for x, p in singles}
        ax.step([place[id(p)] for p in front], [p.accuracy for p in front], where="post",
                color=_STYLES["single"]["color"], alpha=0.5, linestyle="--", label="single-model Pareto front")
    if log:
        from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

        ax.set_xscale("log")
        ax.set_xlim(min(xs) / 1.6, max(xs) * 1.6)  # room for the labels beside the outermost points
        # Ticks at 1, 2 and 5 of each decade, so that even a range under a decade has labelled ticks.
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"${value:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("USD per item" + (" (log scale)" if log else ""))
    ax.set_ylabel("accuracy (95 % interval)")
    ax.set_title(title)
    ax.grid(alpha=0.3, which="both")
    if points:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # outside: labels own the axes
        _place_labels(ax, fig, labelled, xs)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
