"""Figures in the documentation rendered from committed JSON, never typed: a number in a table can then not
drift from the run that made it.

A markdown file marks each generated table with a pair of comments, `<!-- results:NAME -->` and
`<!-- /results:NAME -->`; `fill` replaces what lies between them with the block `render_blocks` makes from the
JSON of a `reso demo --json` run (committed under `docs/results/`). `reso docs` writes the files, and
`reso docs --check` (and the test suite) fails when a file differs from what its JSON renders.

Blocks, for each benchmark stem of the run (`math-l5-mas`, …):

- `frontier-figures`: every benchmark's frontier figures with their intervals;
- `frontier-STEM`: the budgets, the single models' hull and ReSo's hull at each, and the gain;
- `knob-STEM`: each run along the budget knob (the value of a right answer) with its accuracy and cost;
- `table-STEM`: every row of the benchmark's comparison table;

from the JSON of `reso frontier … --versus … --json` (one router's hull against another's), the block
`versus`; from the JSON of `reso bench judge --json`, the block `judge`; and from the JSON of `reso bench
ceiling --json`, the block `ceiling`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from reso.evals.reports.formatting import estimate_text
from reso.evals.reports.run_labels import breakable
from reso.evals.reports.table_labels import (
    BEST_SINGLE,
    COMPARISON_COLUMNS,
    GAP_CLOSED,
    MEAN_GAIN,
    QNC,
    WORST_GAP,
    frontier_columns,
)

__all__ = ["fill", "render_blocks"]

UNIT = "composite"
"""What one item of the main job's runs is."""

_MARKER = re.compile(r"<!-- results:(?P<name>[\w.-]+) -->\n(?P<body>.*?)<!-- /results:(?P=name) -->", re.DOTALL)


def _header(columns: Sequence[str]) -> str:
    """A markdown table's header row and rule."""
    return f"| {' | '.join(columns)} |\n|{' --- |' * len(columns)}"


def _interval(ci: Sequence[float] | None, scale: float = 100.0, signed: bool = True, digits: int = 1) -> str:
    if not ci:
        return ""
    sign = "+" if signed else ""
    return f" [{ci[0] * scale:{sign}.{digits}f}, {ci[1] * scale:{sign}.{digits}f}]"


def _estimate(estimate: Mapping[str, Any], scale: float = 100.0, signed: bool = True, digits: int = 1,
              unit: str = "", missing: str = "n/a") -> str:
    return estimate_text(estimate.get("value"), estimate.get("ci95"), scale, signed, unit, digits, missing)


def _model(label: str) -> str:
    return label.removeprefix("single:")


def _figures(frontiers: Mapping[str, Mapping[str, Any]], titles: Mapping[str, str]) -> str:
    lines = [_header(["benchmark", f"{BEST_SINGLE} (USD per {UNIT})", f"{MEAN_GAIN}, points",
                      f"{WORST_GAP}, points (at USD per {UNIT})", f"{QNC} (× its cost)", GAP_CLOSED])]
    for stem, found in frontiers.items():
        lines.append(
            f"| {titles.get(stem, stem)} ({found['items']} composites) | {_model(found['best_single'])} "
            f"(${found['best_single_cost_usd']:.4f}) | {_estimate(found['mean_gain'])} | "
            f"{_estimate(found['worst_gap'])} (${found['worst_budget']:.4f}) | "
            f"{_estimate(found['qnc'], scale=1.0, signed=False, digits=2, unit='×', missing='not reached')} | "
            f"{_estimate(found['gap_closed'], signed=True, digits=0, unit=' %')} |")
    return "\n".join(lines)


def _frontier(found: Mapping[str, Any]) -> str:
    best = found["best_single_cost_usd"]
    cheapest = found["reso_hull"][0][0] if found["reso_hull"] else float("inf")
    lines = [_header(frontier_columns(UNIT))]
    for budget, single, reso in zip(found["budgets"], found["single_at"], found["reso_at"], strict=True):
        shown = f"{reso:.1%}" if budget >= cheapest else "— (cannot go that cheap: 0)"
        lines.append(f"| ${budget:.5f} | {budget / best:.2f} | {single:.1%} | {shown} | {(reso - single) * 100:+.1f} |")
    return "\n".join(lines)


def _knob(found: Mapping[str, Any]) -> str:
    points = sorted((p for p in found["points"] if p["in_router_hull"]), key=lambda p: p["cost_per_item_usd"])
    lines = ["| run | accuracy [95 % CI] | USD per composite | on ReSo's hull |", "| --- | --- | --- | --- |"]
    vertices = {round(cost, 12) for cost, _ in found["reso_hull"]}
    for point in points:
        on_hull = "yes" if round(point["cost_per_item_usd"], 12) in vertices else ""
        lines.append(f"| {point['label']} | {point['accuracy']:.1%}{_interval(point['accuracy_ci95'], signed=False)} | "
                     f"${point['cost_per_item_usd']:.5f} | {on_hull} |")
    return "\n".join(lines)


def _table(rows: Sequence[Mapping[str, Any]]) -> str:
    lines = [_header(COMPARISON_COLUMNS)]
    for row in rows:
        diff = row.get("diff_vs_best_single")
        versus = "–" if diff is None else f"{diff * 100:+.1f}{_interval(row.get('diff_vs_best_single_ci95'))}"
        ratio = row.get("cost_vs_best_single")
        lines.append(f"| {breakable(row['method'])} | {row['accuracy']:.1%}{_interval(row.get('accuracy_ci95'), signed=False)} | "
                     f"{versus} | {row['cost_usd']:.3f} | {'–' if ratio is None else f'{ratio:.2f}×'} |")
    return "\n".join(lines)


def _versus(found: Mapping[str, Any]) -> str:
    best = _model(found["best_single"])

    def qnc(estimate: Mapping[str, Any]) -> str:
        return _estimate(estimate, scale=1.0, signed=False, digits=2, unit="×", missing="not reached")

    return "\n".join([
        "| figure | value [95 % CI] |", "| --- | --- |",
        f"| the second hull less the first, mean over nine budgets up to {best}'s cost, points | "
        f"{_estimate(found['mean_difference'])} |",
        f"| the lowest of those differences, points (at USD per composite) | {_estimate(found['worst_difference'])} "
        f"(${found['worst_budget']:.4f}) |",
        f"| QNC of the first against {best} | {qnc(found['base_qnc'])} |",
        f"| QNC of the second against {best} | {qnc(found['other_qnc'])} |",
        f"| the second's QNC less the first's | {_estimate(found['qnc_difference'], scale=1.0, digits=2)} |"])


_JUDGE_METHODS = {"judge": "the judge's pick", "best_fixed": "best fixed model (training record)",
                  "plurality": "plurality", "weighted_vote": "reliability-weighted vote",
                  "oracle": "oracle (uses labels)"}


def _judge(found: Mapping[str, Any]) -> str:
    lines = ["| method | accuracy [95 % CI] |", "| --- | --- |"]
    for row in found["rows"]:
        lines.append(f"| {_JUDGE_METHODS.get(row['method'], row['method'])} | "
                     f"{_estimate({'value': row['accuracy'], 'ci95': row['ci95']}, signed=False)} % |")
    for key, label in (("judge_minus_plurality", "the plurality"), ("judge_minus_best_fixed", "the best fixed model")):
        if key in found:
            gain = found[key]
            lines.append(f"| the judge less {label}, points | "
                         f"{_estimate({'value': gain['points'], 'ci95': gain['ci95']}, scale=1.0)} |")
    lines.append(f"| the judge's AUC / expected calibration error over {found['answers_graded']} answers | "
                 f"{found['auc']:.3f} / {found['ece']:.3f} |")
    for row in found.get("verifiers") or []:
        auc = "n/a" if row["auc"] is None else f"{row['auc']:.3f}"
        gain = row["minus_plurality"]
        lines.append(f"| vote weighted by {_verifier(row['verifier'])} (its AUC {auc}); less the plurality | "
                     f"{_estimate({'value': row['accuracy'], 'ci95': row['ci95']}, signed=False)} %; "
                     f"{_estimate({'value': gain['points'], 'ci95': gain['ci95']}, scale=1.0)} points |")
    lines.append(f"| questions; models | {found['n']}; {', '.join(found['models'])} |")
    return "\n".join(lines)


def _verifier(name: str) -> str:
    """A verifier's name as the docs show it: a CRM by its kind, not its folder."""
    if name.startswith("crm "):
        return f"CRM `{name.removeprefix('crm ').split(':', 1)[0]}` on the lone solution"
    if name.startswith("synthetic AUC "):
        return f"a synthetic verifier of AUC {name.removeprefix('synthetic AUC ')}"
    return name


def _ceiling(found: Mapping[str, Any]) -> str:
    lines = [f"Cascade {_model(found['cheap'])} > {_model(found['strong'])}, {found['composites']} composites "
             f"({found['sub_questions']} source questions: the cheap model right on {found['cheap_right']:.1%}, "
             f"the strong one on {found['strong_right']:.1%}):", "",
             _header(["verifier of the cheap answer", "its AUC on these answers", f"{MEAN_GAIN}, points",
                      f"{WORST_GAP}, points", f"{QNC} (× the best single model's cost)"])]
    for row in found["verifiers"]:
        auc = "n/a" if row["auc"] is None else f"{row['auc']:.3f}"
        # A hull of many close cascade points has steep, short segments where the delta method's first-order
        # intervals break down (±30 points on a gain of 2): the values only, the draws giving the spread.
        gain = {"value": row["mean_gain"]["value"]}
        worst = {"value": row["worst_gap"]["value"]}
        qnc = {"value": row["qnc"]["value"]}
        lines.append(f"| {_verifier(row['verifier'])} | {auc} | {_estimate(gain)} | "
                     f"{_estimate(worst)} | "
                     f"{_estimate(qnc, scale=1.0, signed=False, digits=2, unit='×', missing='not reached')} |")
    return "\n".join(lines)


def render_blocks(run: Mapping[str, Any], titles: Mapping[str, str] | None = None) -> dict[str, str]:
    """Every block of a `reso demo --json` run, a `reso frontier --versus --json` comparison, or a `reso bench
    judge --json` or `reso bench ceiling --json` report (module docstring); `titles` name the benchmarks."""
    if "mean_difference" in run:
        return {"versus": _versus(run)}
    if "auc" in run and "rows" in run:
        return {"judge": _judge(run)}
    if "verifiers" in run:
        return {"ceiling": _ceiling(run)}
    titles = titles or {}
    frontiers: Mapping[str, Mapping[str, Any]] = run.get("frontiers") or {}
    blocks = {"frontier-figures": _figures(frontiers, titles)}
    for stem, found in frontiers.items():
        blocks[f"frontier-{stem}"] = _frontier(found)
        blocks[f"knob-{stem}"] = _knob(found)
    for stem, rows in (run.get("tables") or {}).items():
        blocks[f"table-{stem}"] = _table(rows)
    return blocks


def fill(text: str, blocks: Mapping[str, str], source: str = "the run") -> str:
    """`text` with every marked block replaced by its rendering.

    Raises:
        ValueError: A marker names a block `blocks` lacks (naming it and `source`).
    """
    def replace(match: re.Match[str]) -> str:
        name = match.group("name")
        if name not in blocks:
            raise ValueError(f"results block {name!r} is not in {source}")
        return f"<!-- results:{name} -->\n{blocks[name]}\n<!-- /results:{name} -->"

    return _MARKER.sub(replace, text)
