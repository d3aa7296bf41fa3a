"""The accuracy–cost picture: accuracy (with its 95 % interval) against USD per item on a log scale, the
single models' Pareto front as a step line (or, for a frontier, the single models' and ReSo's upper hulls
as lines: `reso.evals.reports.hull`), and a numbered key.

Runs are not labelled on the axes, where a sweep's names crowd and cover each other: each place on the
picture gets a number beside its marker, and the key beside the axes names the runs drawn there. Runs whose
markers would overlap share one place and one number (three ReSo variants with the same result are one
place, listed three times). Markers are see-through, so a square under a diamond still shows. The numbers
are placed where they overlap no other number and no marker, deterministically.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reso.evals.reports.plots import pyplot

# Marker style per kind of method: single models, ReSo, other baselines (the oracle drawn hollow).
_STYLES: dict[str, dict[str, Any]] = {
    "single": {"marker": "o", "color": "tab:blue", "label": "single model"},
    "reso": {"marker": "D", "color": "tab:red", "label": "ReSo"},
    "baseline": {"marker": "s", "color": "tab:gray", "label": "other baselines"},
    "oracle": {"marker": "s", "color": "tab:gray", "label": "oracle (uses labels)", "hollow": True},
}
_MARKER_PT = 6.5
# Where a number may go: directions from its place, on rings of growing radius (points).
_DIRECTIONS = [(1, 0), (-1, 0), (0, 1), (0, -1), (0.7, 0.7), (-0.7, 0.7), (0.7, -0.7), (-0.7, -0.7)]
_RADII = (7, 10, 14, 19, 25, 32, 40, 50)
_LEADER_FROM = 14  # a number this far off (points) or further gets a line to its place
KEY_WIDTH = 38  # characters per line of a run's name in the key
NUMBER_GID = "cost-plot-number"
DPI = 120


@dataclass(frozen=True)
class CostPoint:
    """One run on the accuracy–cost picture."""

    label: str
    kind: str  # single | reso | baseline | oracle (see reso.evals.reports.run_labels.method_kind)
    cost_per_item_usd: float
    accuracy: float
    accuracy_ci95: Sequence[float] | None = None


def _marker(kind: str, size: float = _MARKER_PT, **extra: Any) -> dict[str, Any]:
    """A kind's marker as Line2D keywords: see-through where filled, so a marker under another still shows."""
    style = _STYLES.get(kind, _STYLES["baseline"])
    hollow = bool(style.get("hollow"))
    return {"linestyle": "none", "marker": style["marker"], "markersize": size, "color": style["color"],
            "markeredgecolor": style["color"], "markerfacecolor": "none" if hollow else style["color"], **extra}


def pareto_front(points: Sequence[CostPoint]) -> list[CostPoint]:
    """The points no other point beats on both cost and accuracy, cheapest first."""
    front: list[CostPoint] = []
    for point in sorted(points, key=lambda p: (p.cost_per_item_usd, -p.accuracy)):
        if not front or point.accuracy > front[-1].accuracy:
            front.append(point)
    return front


def key_label(point: CostPoint, *, free: bool = False) -> str:
    """A run's name in the key: a single model by its model alone (the markers say it is one), wrapped at
    commas and `>` rather than cut, marked "$0" for a free run drawn at the left edge of a log axis."""
    label = point.label.removeprefix("single:") if point.kind == "single" else point.label
    label = label.replace(",", ", ").replace(">", " > ")
    if free:
        label += " ($0)"
    return "\n".join(textwrap.wrap(label, KEY_WIDTH, break_on_hyphens=False, break_long_words=True))


@dataclass(frozen=True)
class Spot:
    """One numbered place on the picture and the runs drawn there (indices into the points)."""

    number: int
    members: tuple[int, ...]


def spots(pixels: Sequence[tuple[float, float]], points: Sequence[CostPoint], apart: float) -> list[Spot]:
    """Group the points whose markers (at `pixels`) lie closer than `apart` pixels, chained; numbered from
    the most accurate place down (then the cheapest first)."""
    parent = list(range(len(pixels)))

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for i, (xi, yi) in enumerate(pixels):
        for j in range(i):
            xj, yj = pixels[j]
            if (xi - xj) ** 2 + (yi - yj) ** 2 < apart**2:
                parent[root(i)] = root(j)
    groups: dict[int, list[int]] = {}
    for i in range(len(pixels)):
        groups.setdefault(root(i), []).append(i)
    ordered = sorted(groups.values(), key=lambda members: (
        -max(points[i].accuracy for i in members), min(points[i].cost_per_item_usd for i in members)))
    return [Spot(number, tuple(sorted(members, key=lambda i: (-points[i].accuracy, points[i].cost_per_item_usd))))
            for number, members in enumerate(ordered, start=1)]


def _overlap(a: Any, b: Any) -> float:
    width = min(a.x1, b.x1) - max(a.x0, b.x0)
    height = min(a.y1, b.y1) - max(a.y0, b.y0)
    return max(0.0, width) * max(0.0, height)


def _place_numbers(ax: Any, fig: Any, found: Sequence[Spot], places: Sequence[tuple[float, float]],
                   anchors: Sequence[Any], bars: Sequence[Any | None]) -> None:
    """Write each place's number beside it: the nearest position that overlaps no number written before, no
    marker, stays inside the axes and is nearer its own place than any other, sparing the interval bars where
    it can (`bars`: one per point, None without an interval); far ones get a leader line."""
    from matplotlib.transforms import Bbox

    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    scale = fig.dpi / 72  # points to pixels
    half = _MARKER_PT * scale / 2 + 1
    markers = [Bbox.from_extents(x - half, y - half, x + half, y + half) for x, y in anchors]
    taken: list[Any] = []
    for spot in found:
        x, y = anchors[spot.members[0]]
        others = [anchors[i] for i in range(len(anchors)) if i not in spot.members]
        crossed = [bar for i, bar in enumerate(bars) if bar is not None and i not in spot.members]
        mine = [bar for i, bar in enumerate(bars) if bar is not None and i in spot.members]
        probe = ax.text(0, 0, str(spot.number), fontsize=8, fontweight="bold")
        extent = probe.get_window_extent(renderer)
        probe.remove()
        width, height = extent.width + 2, extent.height + 1
        best: tuple[float, float, float, Any] | None = None
        for radius in _RADII:
            for ux, uy in _DIRECTIONS:
                cx, cy = x + ux * radius * scale, y + uy * radius * scale
                box = Bbox.from_bounds(cx - width / 2 + ux * width / 2, cy - height / 2 + uy * height / 2,
                                       width, height)
                # A number nearer another place than its own would be read as that place's.
                centre = ((box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2)
                own = math.dist(centre, (x, y))
                nearer = sum(1 for other in others if math.dist(centre, other) < 1.5 * own)
                cost = (1000 * sum(_overlap(box, other) for other in [*taken, *markers])
                        + 1000 * (width * height - _overlap(box, frame)) + 2000 * nearer
                        + 5 * sum(_overlap(box, bar) for bar in crossed)
                        + sum(_overlap(box, bar) for bar in mine) + radius)
                if best is None or cost < best[0]:
                    best = (cost, ux * radius, uy * radius, box)
        assert best is not None
        _, dx, dy, box = best
        offset = (dx + (dx > 0) - (dx < 0), dy + (dy > 0) - (dy < 0))  # the box's near edge, not its centre
        far = max(abs(dx), abs(dy)) >= _LEADER_FROM
        text = ax.annotate(str(spot.number), places[spot.members[0]], xytext=offset,
                           textcoords="offset points", fontsize=8, fontweight="bold",
                           bbox={"boxstyle": "square,pad=0.05", "facecolor": "white", "edgecolor": "none",
                                 "alpha": 0.7},
                           ha="left" if dx > 0 else "right" if dx < 0 else "center",
                           va="bottom" if dy > 0 else "top" if dy < 0 else "center",
                           arrowprops={"arrowstyle": "-", "color": "0.5", "lw": 0.6, "shrinkA": 0, "shrinkB": 4}
                           if far else None, zorder=5)
        text.set_gid(NUMBER_GID)
        taken.append(box)


def _free_x(points: Sequence[CostPoint]) -> tuple[list[float], bool]:
    """Each point's x, and whether the axis is logarithmic: free runs stand at a third of the cheapest paid
    one's cost there."""
    paid = [p.cost_per_item_usd for p in points if p.cost_per_item_usd > 0]
    floor = min(paid) / 3 if paid else 1.0
    return [p.cost_per_item_usd if p.cost_per_item_usd > 0 or not paid else floor for p in points], bool(paid)


def _axes(ax: Any, points: Sequence[CostPoint], xs: Sequence[float], log: bool, title: str) -> None:
    if log:
        from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

        ax.set_xscale("log")
        ax.set_xlim(min(xs) / 1.5, max(xs) * 1.5)
        # Ticks at 1, 2 and 5 of each decade, so that even a range under a decade has labelled ticks; fewer
        # over a wider range, where they would run into each other.
        decades = math.log10(max(xs) / min(xs))
        subs = (1.0, 2.0, 5.0) if decades <= 1.5 else (1.0, 3.0) if decades <= 3 else (1.0,)
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=subs))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"${value:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
    lowest = min((p.accuracy_ci95[0] if p.accuracy_ci95 else p.accuracy for p in points), default=0.0)
    ax.set_ylim(max(0.0, int(lowest * 10) / 10 - 0.05) - 0.02, 1.02)  # the axis starts near the lowest bar
    ax.set_xlabel("USD per item" + (" (log scale)" if log else ""))
    ax.set_ylabel("accuracy (95 % interval)")
    ax.set_title(title)
    ax.grid(alpha=0.3, which="both")


# How each hull is drawn (`draw_accuracy_cost`'s `hulls`, keyed by the kind whose runs make it).
_HULL_STYLES: dict[str, dict[str, Any]] = {
    "single": {"color": "tab:blue", "linestyle": "--", "label": "single models' hull (any random mix reaches it)"},
    "reso": {"color": "tab:red", "linestyle": "-", "label": "ReSo's hull"},
}


_HULL_STEPS = 64


def _draw_hulls(ax: Any, hulls: Mapping[str, Sequence[tuple[float, float]]], right: float,
                handles: dict[str, Any]) -> None:
    """Each hull as a line through its vertices, flat from its last vertex to the right edge `right`. A mix
    of two runs is linear in cost, so each segment is drawn through points between its ends: on the log axis a
    straight line from vertex to vertex would misplace every mix."""
    for kind, vertices in hulls.items():
        if not vertices:
            continue
        style = _HULL_STYLES.get(kind, {"color": "0.4", "linestyle": ":", "label": f"{kind} hull"})
        xs, ys = [vertices[0][0]], [vertices[0][1]]
        for (c0, a0), (c1, a1) in zip(vertices, vertices[1:]):
            # Spaced evenly on the log axis (from a third of the way where the segment starts at $0).
            start = c0 if c0 > 0 else c1 / 3
            for x in (start * (c1 / start) ** (i / _HULL_STEPS) for i in range(1, _HULL_STEPS + 1)):
                xs.append(x)
                ys.append(a0 + (a1 - a0) * (x - c0) / (c1 - c0))
        xs.append(max(right, vertices[-1][0]))
        ys.append(vertices[-1][1])
        (line,) = ax.plot(xs, ys, color=style["color"], linestyle=style["linestyle"], alpha=0.6, lw=1.4,
                          label=style["label"], zorder=1)
        handles[f"hull-{kind}"] = line


def draw_accuracy_cost(points: Sequence[CostPoint], title: str = "Accuracy against cost",
                       hulls: Mapping[str, Sequence[tuple[float, float]]] | None = None) -> Any:
    """The picture as a matplotlib figure, drawn (the caller saves and closes it). With `hulls` (vertices
    by the kind of runs that make each: `single`, `reso`), those lines are drawn instead of the single
    models' Pareto front."""
    from matplotlib.lines import Line2D
    from matplotlib.transforms import Bbox

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 5.2), dpi=DPI)
    xs, log = _free_x(points)
    _axes(ax, points, xs, log, title)
    handles: dict[str, Any] = {}
    for x, point in zip(xs, points, strict=True):
        style = _STYLES.get(point.kind, _STYLES["baseline"])
        lo, hi = point.accuracy_ci95 or (point.accuracy, point.accuracy)
        ax.errorbar([x], [point.accuracy], yerr=[[point.accuracy - lo], [hi - point.accuracy]], fmt="none",
                    ecolor=style["color"], elinewidth=1, capsize=3, alpha=0.6, zorder=2)
        (marker,) = ax.plot([x], [point.accuracy], zorder=3, **_marker(point.kind, markeredgewidth=1.3))
        marker.set_alpha(1 if style.get("hollow") else 0.55)
        handles.setdefault(point.kind, Line2D([], [], label=style["label"], **_marker(point.kind)))
    singles = [(x, p) for x, p in zip(xs, points, strict=True) if p.kind == "single"]
    if hulls is not None:
        _draw_hulls(ax, hulls, max(xs, default=1.0) * 1.5, handles)
    elif len(singles) > 1:
        front = pareto_front([p for _, p in singles])
        place = {id(p): x for x, p in singles}
        (line,) = ax.step([place[id(p)] for p in front], [p.accuracy for p in front], where="post",
                          color=_STYLES["single"]["color"], alpha=0.5, linestyle="--",
                          label="single-model Pareto front")
        handles["front"] = line
    if not points:
        return fig
    fig.canvas.draw()
    anchors = [tuple(ax.transData.transform((x, p.accuracy))) for x, p in zip(xs, points, strict=True)]
    found = spots(anchors, points, apart=_MARKER_PT * fig.dpi / 72 * 1.1)
    bars: list[Any | None] = []
    for x, point in zip(xs, points, strict=True):
        bars.append(None)
        if point.accuracy_ci95:
            low, high = point.accuracy_ci95
            (bx, bottom), (_, top) = ax.transData.transform([(x, low), (x, high)])
            bars[-1] = Bbox.from_extents(bx - 4, bottom, bx + 4, top)
    _place_numbers(ax, fig, found, [(x, p.accuracy) for x, p in zip(xs, points, strict=True)], anchors, bars)
    _key(ax, points, log, found, handles)
    return fig


def _key(ax: Any, points: Sequence[CostPoint], log: bool, found: Sequence[Spot], handles: dict[str, Any]) -> None:
    """The key beside the axes: what the markers mean, then every run under its place's number."""
    from matplotlib.lines import Line2D

    kinds = [handles[kind] for kind in ("reso", "single", "baseline", "oracle", "front", "hull-reso", "hull-single")
             if kind in handles]
    entries: list[tuple[Any, str]] = [(handle, handle.get_label()) for handle in kinds]
    for spot in found:
        for index in spot.members:
            point = points[index]
            free = log and point.cost_per_item_usd <= 0
            entries.append((Line2D([], [], **_marker(point.kind, size=4)),
                            f"{spot.number}  {key_label(point, free=free)}  {point.accuracy:.0%}"))
    legend = ax.legend([handle for handle, _ in entries], [text for _, text in entries], fontsize=7.5,
                       loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, handletextpad=0.4,
                       labelspacing=0.35, frameon=False)
    legend.set_gid("cost-plot-key")


def plot_accuracy_cost(points: Sequence[CostPoint], path: Path, title: str = "Accuracy against cost",
                       hulls: Mapping[str, Sequence[tuple[float, float]]] | None = None) -> None:
    """Write the picture to `path` (PNG); `hulls` as for `draw_accuracy_cost`."""
    fig = draw_accuracy_cost(points, title, hulls)
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    pyplot().close(fig)
