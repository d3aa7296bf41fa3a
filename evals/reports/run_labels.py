"""How reports name runs: a method's kind and label, and labels that tell apart runs of one method by the
settings in which they differ (cost weight, k, adaptive settings ...).

The oracle scores with the reference answers, so wherever it is shown it is labelled as using the labels,
and a single model's run by its model: the runner writes that label into the summary (`method_label`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from pathlib import PurePath
from typing import Any, Literal

from reso.evals.method_kind import MethodKind

# Settings that differ between run folders without changing the method (each run has its own DADB path).
_IGNORED_SETTINGS = frozenset({"db"})

# The method kinds a report shows apart; every other kind (random, vote, cascade, cot-sc ...) is a baseline.
_SHOWN_APART = frozenset({MethodKind.SINGLE, MethodKind.RESO, MethodKind.ORACLE})
BASELINE: Literal["baseline"] = "baseline"


def method_kind(method: str) -> MethodKind | Literal["baseline"]:
    """The kind of a method name (`reso.evals.methods.MethodKind`) when reports show it apart (one model
    alone, ReSo, the oracle), else `baseline`."""
    head = method.split(":", 1)[0]
    return MethodKind(head) if head in _SHOWN_APART else BASELINE


def method_label(summary: Mapping[str, Any]) -> str:
    """The method's display name, as the runner labelled it (`reso.evals.methods.Method.label`)."""
    return str(summary["method_label"])


def _short(value: Any) -> str:
    """A setting's value for a label: paths shortened to their last part, floats without trailing zeros."""
    if isinstance(value, float):
        return f"{value:g}"
    text = str(value)
    if "/" not in text:
        return text
    prefix, colon, path = text.partition(":")  # a scorer spec such as small:runs/crm keeps its prefix
    if not colon or "/" in prefix:
        prefix, colon, path = "", "", text
    return prefix + colon + PurePath(path).name


def differing_settings(summaries: Sequence[Mapping[str, Any]]) -> list[str]:
    """The settings whose values are not the same in every one of `summaries` (in the settings' order)."""
    keys: dict[str, None] = {}
    for summary in summaries:
        keys.update(dict.fromkeys(summary.get("settings") or {}))
    return [key for key in keys if key not in _IGNORED_SETTINGS
            and len({repr((s.get("settings") or {}).get(key)) for s in summaries}) > 1]


def run_labels(summaries: Sequence[Mapping[str, Any]]) -> list[str]:
    """One label per summary: the method's, plus the settings that differ among runs of that method, plus
    the run folder when that still leaves two alike (summaries may carry their folder as `run`)."""
    by_method: dict[str, list[int]] = defaultdict(list)
    for index, summary in enumerate(summaries):
        by_method[str(summary["method"])].append(index)
    labels = [str(summary.get("run_label") or method_label(summary)) for summary in summaries]
    for indices in by_method.values():
        # A run that names itself (`run_label`, written by `reso demo`) keeps that name.
        indices = [i for i in indices if not summaries[i].get("run_label")]
        if len(indices) < 2:
            continue
        group = [summaries[i] for i in indices]
        keys = differing_settings(group)
        for i, summary in zip(indices, group, strict=True):
            settings = summary.get("settings") or {}
            if keys:
                labels[i] += " (" + ", ".join(f"{key}={_short(settings.get(key))}" for key in keys) + ")"
    seen = Counter(labels)
    return [f"{label} [{summaries[i].get('run', i)}]" if seen[label] > 1 else label
            for i, label in enumerate(labels)]


def breakable(label: str) -> str:
    """A method's label with room to wrap between its parts (`single: o1-mini`, `cascade: a, b > c`), so a
    narrow terminal table wraps between model names instead of cutting one."""
    head, colon, rest = label.partition(":")
    if not colon or " " in head or rest.isdigit():  # `vote:3` has nothing to wrap
        return label
    return f"{head}: " + rest.replace(",", ", ").replace(">", " > ")
