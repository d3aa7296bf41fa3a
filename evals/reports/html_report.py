"""A run's report as one self-contained HTML page (`DIR/report.html`): the summary with its interval, the
plots embedded as base64 PNG, and per item its DAG (inline SVG), each step's chosen agent, value and
verdict, and every candidate with its score and selection components, folded in `<details>` elements.

No script, stylesheet, font or image is fetched from anywhere: the page works offline and from a file.
Every text taken from a run is escaped. To keep a 300-item page small, agents' model names are listed once
and numbers are written with three significant digits. Models go by their names, recorded ones with the
names of the files replayed (never this machine's paths), and the items by their ids in natural order.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from reso.evals.reports.dag_svg import ARROW_DEFS, dag_svg
from reso.evals.reports.formatting import command_text, interval_text
from reso.evals.reports.run_labels import method_label

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:1100px;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0}th,td{border:1px solid #ccc;padding:2px 6px;text-align:left;
vertical-align:top}th{background:#f3f3f3}td.n{text-align:right}.ok{color:#17692c}.bad{color:#b3261e}
.unk{color:#666}details.item{border-top:1px solid #ddd;padding:3px 0}details.item>summary{cursor:pointer}
details details{margin-left:.4em}figure{margin:.6em 0}img{max-width:100%}code{font-size:12px}
svg.dag{display:block;margin:.4em 0}svg.dag line{stroke:#555;stroke-width:1.3}
svg.dag rect{stroke:#444;stroke-width:1}svg.dag text{font:11px system-ui,sans-serif;fill:#111}
svg.dag text.sid{font-weight:bold}svg.dag .ok rect{fill:#d4f0dc}svg.dag .bad rect{fill:#f7d4d1}
svg.dag .unk rect{fill:#eee}.note{background:#fff4ce;padding:4px 8px}.wide{overflow-x:auto}
table.cand{font-size:12px}table.cand td.kept{font-weight:bold}
"""
VERDICT = {True: ("ok", "right"), False: ("bad", "wrong"), None: ("unk", "–")}


def _text(value: Any) -> str:
    return escape("–" if value is None else str(value))


def _num(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool) or not isinstance(value, float):
        return escape(str(value))
    return f"{value:.3g}"


def _verdict(correct: bool | None) -> str:
    css, word = VERDICT[correct if correct in (True, False) else None]
    return f'<span class="{css}">{word}</span>'


def _summary_table(summary: Mapping[str, Any], interval: Sequence[float] | None) -> str:
    cells = [
        ("items", str(summary["n"])), ("accuracy", f'<b id="accuracy">{summary["accuracy"]:.1%}</b>'),
        ("95 % interval (Wilson)", interval_text(interval)), ("tokens / item", f'{summary["tokens_per_item"]:.0f}'),
        ("USD", f'{summary["cost_usd"]:.4f}'), ("USD / item", f'{summary.get("cost_per_item_usd", 0.0):.5f}'),
        ("mean latency (s)", f'{summary["latency_s"]:.2f}'), ("failed items", str(summary["failed_items"])),
    ]
    head = "".join(f"<th>{escape(name)}</th>" for name, _ in cells)
    body = "".join(f'<td class="n">{value}</td>' for _, value in cells)
    return f'<table class="summary"><tr>{head}</tr><tr>{body}</tr></table>'


def _agents_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """Every agent that answered, by id, with its model's name and role; below, the files replayed."""
    from reso.agents.profiles import model_files, model_name

    agents: dict[str, tuple[str, str]] = {}
    files: dict[str, None] = {}
    for row in rows:
        for step in row["steps"]:
            for candidate in step.get("candidates", []):
                spec = str(candidate.get("model", ""))
                agents.setdefault(str(candidate["agent_id"]), (model_name(spec) if ":" in spec else spec,
                                                               str(candidate.get("role", ""))))
                files.update(dict.fromkeys(model_files(spec)))
    if not agents:
        return ""
    lines = "".join(f"<tr><td>{escape(agent)}</td><td><code>{escape(model)}</code></td><td>{escape(role)}</td></tr>"
                    for agent, (model, role) in sorted(agents.items()))
    source = (f'<p class="unk">Models recorded in {", ".join(f"<code>{escape(name)}</code>" for name in files)}.</p>'
              if files else "")
    return f"<h2>Agents</h2><table><tr><th>agent</th><th>model</th><th>role</th></tr>{lines}</table>{source}"


def natural_key(item_id: Any) -> tuple[tuple[int, int | str], ...]:
    """A sort key putting `q2` before `q10`: runs of digits compare as numbers."""
    parts = re.split(r"([0-9]+)", str(item_id))
    return tuple((0, int(part)) if part.isdigit() and part.isascii() else (1, part) for part in parts if part)


def _candidates(step: Mapping[str, Any]) -> str:
    candidates = step.get("candidates") or []
    if not candidates:
        return ""
    components: dict[str, None] = {}
    for candidate in candidates:
        components.update(dict.fromkeys(candidate.get("selection") or {}))
    head = ('<tr><th colspan="6">candidate</th>'
            f'<th colspan="{len(components)}">selection components</th></tr><tr>' if components else "<tr>")
    head += "".join(f"<th>{escape(name)}</th>" for name in
                    ["agent", "value", "CRM score", "reward", "USD", "error", *components]) + "</tr>"
    lines = []
    for candidate in candidates:
        kept = ' class="kept"' if candidate.get("agent_id") == step.get("agent") else ""
        selection = candidate.get("selection") or {}
        cells = [f"<td{kept}>{_text(candidate.get('agent_id'))}</td>", f"<td>{_text(candidate.get('value'))}</td>",
                 *(f"<td>{_num(candidate.get(key))}</td>" for key in ("score", "reward", "cost_usd")),
                 f"<td>{_text(candidate.get('error'))}</td>",
                 *(f"<td>{_num(selection.get(name))}</td>" for name in components)]
        lines.append(f"<tr>{''.join(cells)}</tr>")
    return (f'<details><summary>step {_text(step["id"])}: '
            f'{len(candidates)} candidate(s)</summary><div class="wide"><table class="cand">{head}'
            f"{''.join(lines)}</table></div></details>")


def _item(row: Mapping[str, Any]) -> str:
    usage = row.get("usage") or {}
    title = (f'{_verdict(row["correct"])} <b>{_text(row["id"])}</b>: answer {_text(row.get("answer"))} '
             f'(reference {_text(row.get("reference"))}) · USD {usage.get("cost_usd", 0.0):.4f} · '
             f'{usage.get("total_tokens", 0)} tokens')
    steps = row["steps"]
    lines = "".join(
        f'<tr data-step="{escape(str(step["id"]))}"><td>{_text(step["id"])}</td>'
        f'<td class="agent">{_text(step.get("agent"))}</td><td>{_text(step.get("value"))}</td>'
        f'<td>{_text(step.get("reference"))}</td><td>{_verdict(step.get("correct"))}</td>'
        f'<td>{_text(step.get("status"))}</td></tr>' for step in steps)
    table = ("<table><tr><th>step</th><th>chosen agent</th><th>value</th><th>reference</th><th>verdict</th>"
             f"<th>status</th></tr>{lines}</table>") if steps else "<p>No steps.</p>"
    candidates = "".join(_candidates(step) for step in steps)
    notes = "".join(f'<p class="note">{escape(str(note))}</p>' for note in row.get("notes") or [])
    return (f'<details class="item" id="item-{escape(str(row["id"]))}"><summary>{title}</summary>'
            f"{dag_svg(steps)}{table}{candidates}{notes}</details>")


def _figure(caption: str, image: Path) -> str:
    data = base64.b64encode(image.read_bytes()).decode("ascii")
    return (f'<figure><img alt="{escape(caption)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{escape(caption)}</figcaption></figure>")


def render_run_html(summary: Mapping[str, Any], rows: Sequence[Mapping[str, Any]],
                    figures: Sequence[tuple[str, Path]] = ()) -> str:
    """The page of one run: `figures` are (caption, PNG file) pairs to embed."""
    title = f"{method_label(summary)} on {summary['dataset']} ({summary['mode']})"
    interval = summary["accuracy_ci95"]
    stopped = (f'<p class="note"><b>Stopped early:</b> {escape(str(summary["stopped"]))} '
               "(the results are partial).</p>") if summary.get("stopped") else ""
    right = sum(1 for row in rows if row["correct"])
    body = [
        f"<h1>{escape(title)}</h1>", _summary_table(summary, interval), stopped,
        f"<p>Command: <code>{escape(command_text(summary.get('command')))}</code><br>"
        f"Seed: {_text(summary.get('seed'))}</p>",
        *(_figure(caption, path) for caption, path in figures if path.exists()),
        _agents_table(rows),
        f"<h2>Items ({len(rows)}: {right} right, {len(rows) - right} wrong)</h2>",
        ARROW_DEFS, *(_item(row) for row in sorted(rows, key=lambda row: natural_key(row["id"]))),
    ]
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
            f"<style>{_CSS}</style></head><body>{''.join(body)}</body></html>\n")


def write_run_html(run_dir: Path, summary: Mapping[str, Any], rows: Sequence[Mapping[str, Any]],
                   figures: Sequence[tuple[str, Path]] = ()) -> Path:
    """Write `run_dir/report.html`; returns its path."""
    path = run_dir / "report.html"
    path.write_text(render_run_html(summary, rows, figures), encoding="utf-8")
    return path
