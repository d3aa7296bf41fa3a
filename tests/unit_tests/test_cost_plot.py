"""The accuracy–cost picture on a crowded sweep (the GSM8K demo's 21 runs): every place's number overlaps no
other number and no marker, runs drawn at one place share its number, and the key names single models by
model and lists every run once."""

from __future__ import annotations

import itertools

import pytest
from matplotlib.transforms import Bbox

from reso.evals.reports.cost_plot import NUMBER_GID, CostPoint, draw_accuracy_cost, key_label, spots
from reso.evals.reports.plots import pyplot

# (label, kind, USD per item, accuracy, interval) of the GSM8K demo's test runs.
GSM8K = [
    ("cascade:Meta-Llama-3.1-70B-Instruct,gpt-4o-mini-2024-07-18>claude-3-5-sonnet-20240620", "baseline", 0.00186,
     0.89, (0.814, 0.937)),
    ("oracle (uses labels)", "oracle", 0.02704, 0.93, (0.863, 0.966)),
    ("random", "baseline", 0.00444, 0.82, (0.733, 0.883)),
    ("reso", "reso", 0.00105, 0.88, (0.802, 0.930)),
    ("reso (cost weight 0.3)", "reso", 0.0018, 0.89, (0.814, 0.937)),
    ("reso (cost weight 3)", "reso", 0.00105, 0.88, (0.802, 0.930)),
    ("reso (fixed k=2)", "reso", 0.0007, 0.83, (0.745, 0.891)),
    ("reso (whole first stage)", "reso", 0.00105, 0.88, (0.802, 0.930)),
    ("single:claude-3-5-sonnet-20240620", "single", 0.00943, 0.88, (0.802, 0.930)),
    ("single:deepseek-v2.5-0908", "single", 0.00019, 0.79, (0.700, 0.858)),
    ("single:gemini-1.5-flash", "single", 0.00014, 0.72, (0.625, 0.800)),
    ("single:gemini-1.5-pro", "single", 0.00256, 0.82, (0.733, 0.883)),
    ("single:gemma-2-2b-it", "single", 0.00006, 0.08, (0.041, 0.150)),
    ("single:gpt-4o-2024-08-06", "single", 0.00592, 0.91, (0.838, 0.952)),
    ("single:gpt-4o-mini-2024-07-18", "single", 0.00035, 0.81, (0.722, 0.875)),
    ("single:Meta-Llama-3.1-70B-Instruct", "single", 0.00088, 0.85, (0.767, 0.907)),
    ("single:Meta-Llama-3.1-8B-Instruct", "single", 0.0002, 0.63, (0.532, 0.718)),
    ("single:o1-mini-2024-09-12", "single", 0.00581, 0.88, (0.802, 0.930)),
    ("single:Phi-3.5-mini-instruct", "single", 0.00011, 0.61, (0.512, 0.700)),
    ("single:Qwen2-72B-Instruct", "single", 0.00078, 0.76, (0.668, 0.833)),
    ("vote:3", "baseline", 0.02101, 0.88, (0.802, 0.930)),
]


@pytest.fixture(scope="module")
def drawn():
    points = [CostPoint(label, kind, cost, accuracy, interval) for label, kind, cost, accuracy, interval in GSM8K]
    fig = draw_accuracy_cost(points)
    fig.canvas.draw()
    yield fig, points
    pyplot().close(fig)


def _overlap(a, b) -> float:
    return max(0.0, min(a.x1, b.x1) - max(a.x0, b.x0)) * max(0.0, min(a.y1, b.y1) - max(a.y0, b.y0))


def _numbers(fig):
    ax = fig.axes[0]
    renderer = fig.canvas.get_renderer()
    return [(text.get_text(), text.get_window_extent(renderer)) for text in ax.texts if text.get_gid() == NUMBER_GID]


def test_numbers_overlap_no_other_number_and_stay_inside_the_axes(drawn):
    fig, _ = drawn
    numbers = _numbers(fig)
    frame = fig.axes[0].get_window_extent(fig.canvas.get_renderer())
    assert sorted(int(text) for text, _ in numbers) == list(range(1, len(numbers) + 1))
    for (a, box_a), (b, box_b) in itertools.combinations(numbers, 2):
        assert _overlap(box_a, box_b) == 0, (a, b)
    for text, box in numbers:
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1, text


def test_numbers_cover_no_marker_and_sit_nearest_their_own_place(drawn):
    fig, points = drawn
    ax = fig.axes[0]
    key = {text.get_text().split("  ")[1].split("\n")[0]: int(text.get_text().split()[0])
           for text in ax.get_legend().get_texts() if text.get_text()[:1].isdigit()}
    markers = [line for line in ax.lines if line.get_marker() in ("o", "D", "s") and len(line.get_xdata()) == 1]
    places = [(ax.transData.transform((line.get_xdata()[0], line.get_ydata()[0]))) for line in markers]
    assert len(places) == len(points)
    number_of = {int(text): box for text, box in _numbers(fig)}
    half = markers[0].get_markersize() * fig.dpi / 72 / 2
    for point, (x, y) in zip(points, places, strict=True):
        marker = Bbox.from_extents(x - half, y - half, x + half, y + half)
        for number, box in number_of.items():
            assert _overlap(box, marker) == 0, (point.label, number)
    for point, place in zip(points, places, strict=True):
        box = number_of[key[key_label(point).split("\n")[0]]]
        centre = ((box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2)
        own = ((centre[0] - place[0]) ** 2 + (centre[1] - place[1]) ** 2) ** 0.5
        assert own < 60, point.label  # beside its marker, not across the picture


def test_runs_at_one_place_share_a_number_and_the_key_lists_each_run_once(drawn):
    fig, points = drawn
    entries = [text.get_text() for text in fig.axes[0].get_legend().get_texts() if text.get_text()[:1].isdigit()]
    assert len(entries) == len(points)
    by_label = {entry.split("  ")[1]: entry.split("  ")[0] for entry in entries}
    # Three ReSo settings with the same result: one place, one number.
    assert by_label["reso"] == by_label["reso (cost weight 3)"] == by_label["reso (whole first stage)"]
    # o1-mini and gpt-4o are close but apart: two numbers; the cascade under a ReSo run shares its place.
    assert by_label["o1-mini-2024-09-12"] != by_label["gpt-4o-2024-08-06"]
    cascade = next(label for label in by_label if label.startswith("cascade:"))
    assert by_label[cascade] == by_label["reso (cost weight 0.3)"]
    assert "gpt-4o-2024-08-06" in by_label and not any(label.startswith("single:") or "/" in label
                                                       for label in by_label)
    assert "…" not in "".join(entries)  # wrapped, never cut
    assert cascade.replace("\n", " ").endswith("> claude-3-5-sonnet-20240620")


def test_spots_chain_close_markers_and_number_from_the_top():
    points = [CostPoint("a", "reso", 1.0, 0.5), CostPoint("b", "single", 1.0, 0.9), CostPoint("c", "reso", 1.0, 0.5)]
    found = spots([(0.0, 0.0), (100.0, 100.0), (5.0, 0.0)], points, apart=8)
    assert [(spot.number, spot.members) for spot in found] == [(1, (1,)), (2, (0, 2))]


def test_a_key_label_names_a_single_model_by_model_and_wraps_long_names():
    assert key_label(CostPoint("single:gpt-4o", "single", 1.0, 0.5)) == "gpt-4o"
    assert key_label(CostPoint("random", "baseline", 0.0, 0.5), free=True) == "random ($0)"
    wrapped = key_label(CostPoint("cascade:Meta-Llama-3.1-70B-Instruct,gpt-4o-mini>claude-3-5-sonnet", "baseline",
                                  1.0, 0.5))
    assert wrapped.split("\n") == ["cascade:Meta-Llama-3.1-70B-Instruct,", "gpt-4o-mini > claude-3-5-sonnet"]
