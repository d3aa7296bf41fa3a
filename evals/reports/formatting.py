"""How a run's interval and command read in a report: `interval_text` and `command_text`, shared by the
markdown report (`report.py`) and the HTML page (`html_report.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePath
from typing import Any

__all__ = ["command_text", "interval_text"]


def interval_text(interval: Sequence[float] | None, signed: bool = False) -> str:
    """An interval for a table: percentages, or signed percentage points; "–" when there is none."""
    if not interval:
        return "–"
    if signed:
        return f"{interval[0] * 100:+.1f} to {interval[1] * 100:+.1f} pt"
    return f"{interval[0]:.1%} – {interval[1]:.1%}"


def command_text(command: Sequence[Any] | None) -> str:
    """The command a run was started with, its program by name (`reso`, not this machine's path to it)."""
    words = [str(word) for word in command or []]
    return " ".join([PurePath(words[0]).name, *words[1:]] if words else [])


def estimate_text(value: float | None, ci95: Sequence[float] | None, scale: float = 100.0, signed: bool = True,
                  unit: str = " points", digits: int = 1, missing: str = "n/a") -> str:
    """An estimate and its 95 % interval as the terminal and the docs print it (`+1.2 points [-0.5, +2.9]`),
    `missing` where there is no value; scaled by `scale` (100: a share as points)."""
    if value is None:
        return missing
    sign = "+" if signed else ""
    text = f"{value * scale:{sign}.{digits}f}{unit}"
    if ci95:
        low, high = ci95
        text += f" [{low * scale:{sign}.{digits}f}, {high * scale:{sign}.{digits}f}]"
    return text
