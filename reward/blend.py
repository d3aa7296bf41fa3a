"""Blend scorer: the weighted mean of named scorers, configured in YAML.

```yaml
scorers:
  - kind: steps            # any registry spec: rule, consensus, steps, judge:<model>, prm:<dir>, …
    weight: 0.5
  - kind: consensus
    weight: 0.5
    rel_tol: 0.01          # other keys are that scorer's settings
```

Weights are normalised by their sum; entries of weight 0 are skipped (and never built). A member that fails
on an item is left out of that item's mean (the others' weights renormalised, the failure kept in the
reason); the item fails only when every member does. A bad file fails
with a `ScorerConfigError` that names the file, the entry and the field. Building the scorers from the
entries is the registry's job (`reso.reward.registry.build_scorer`).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from reso.reward.base import SCORER_FAILED, Score, ScoreItem, Scorer, failed_score
from reso.reward.config_error import ScorerConfigError

_TOP_LEVEL_KEYS = {"scorers", "name", "description"}


@dataclass(frozen=True, slots=True)
class BlendEntry:
    """One configured member of a blend: its spec, its weight, its settings and where it was written."""

    kind: str
    weight: float
    options: dict[str, Any] = field(default_factory=dict)
    where: str = ""


class BlendScorer(Scorer):
    """Weighted mean of several scorers' values; reasons of the members are kept, prefixed by name."""

    name = "blend"

    def __init__(self, members: Sequence[tuple[str, Scorer, float]]) -> None:
        """Combine scorers.

        Args:
            members: (name, scorer, weight) triples; weights must be finite and >= 0, with a positive sum.
        """
        if not members:
            raise ValueError("a blend needs at least one scorer")
        for name, _, weight in members:
            if not (isinstance(weight, int | float) and math.isfinite(weight) and weight >= 0):
                raise ValueError(f"weight of {name!r} must be a finite number >= 0, got {weight!r}")
        total = sum(weight for _, _, weight in members)
        if total <= 0:
            raise ValueError("a blend needs at least one positive weight")
        self.members = [(name, scorer, weight / total) for name, scorer, weight in members if weight > 0]

    def score_detailed(self, items: Sequence[ScoreItem]) -> list[Score]:
        return self._combine([scorer.score_detailed(items) for _, scorer, _ in self.members], len(items))

    async def ascore_detailed(self, items: Sequence[ScoreItem]) -> list[Score]:
        """Async scoring: members with `ascore_detailed` run natively, the others in threads, together."""
        calls = [
            scorer.ascore_detailed(items)
            if hasattr(scorer, "ascore_detailed")
            else asyncio.to_thread(scorer.score_detailed, items)
            for _, scorer, _ in self.members
        ]
        return self._combine(list(await asyncio.gather(*calls)), len(items))

    def _combine(self, results: list[list[Score]], count: int) -> list[Score]:
        combined = []
        for index in range(count):
            scores = [(name, weight, results[m][index]) for m, (name, _, weight) in enumerate(self.members)]
            live = [(weight, score) for _, weight, score in scores if not score.failed]
            if not live:
                combined.append(failed_score("; ".join(f"{name}: {score.reason}" for name, _, score in scores)))
                continue
            value = sum(weight * score.value for weight, score in live) / sum(weight for weight, _ in live)
            reasons = [
                f"{name} left out: {score.reason.removeprefix(SCORER_FAILED)}" if score.failed
                else f"{name}: {score.reason}"
                for name, _, score in scores
                if score.reason
            ]
            combined.append(Score(min(max(value, 0.0), 1.0), "; ".join(reasons) or None))
        return combined


def read_blend_config(source: str | Path | Mapping[str, Any]) -> list[BlendEntry]:
    """Validate a blend configuration (a YAML file or an already-loaded mapping) into entries.

    Args:
        source: Path of the YAML file, or the mapping itself.

    Returns:
        The entries with a positive weight, in file order.

    Raises:
        ScorerConfigError: Missing file, bad YAML, or a bad field; the message names file, entry and field.
    """
    lines: dict[int, int]
    if isinstance(source, Mapping):
        label, data, lines = "<blend config>", source, {}
    else:
        label = str(source)
        data, lines = _load_yaml(Path(source))
    if not isinstance(data, Mapping):
        raise ScorerConfigError(
            f"{label}: expected a mapping with a 'scorers' list, got {type(data).__name__}"
        )
    unknown = sorted(set(map(str, data)) - _TOP_LEVEL_KEYS)
    if unknown:
        raise ScorerConfigError(
            f"{label}: unknown field {unknown[0]!r} (expected: scorers, name, description)"
        )
    scorers = data.get("scorers")
    if not isinstance(scorers, list) or not scorers:
        raise ScorerConfigError(f"{label}: scorers: must be a non-empty list of {{kind, weight}} entries")
    entries = []
    for index, raw in enumerate(scorers):
        where = f"{label}: scorers[{index}]" + (f" (line {lines[index]})" if index in lines else "")
        entries.append(_entry(raw, where))
    if not any(entry.weight > 0 for entry in entries):
        raise ScorerConfigError(f"{label}: scorers: every weight is 0; at least one must be positive")
    return [entry for entry in entries if entry.weight > 0]


def _entry(raw: Any, where: str) -> BlendEntry:
    if not isinstance(raw, Mapping):
        raise ScorerConfigError(f"{where}: must be a mapping with 'kind' and 'weight', got {raw!r}")
    kind = raw.get("kind")
    if not isinstance(kind, str) or not kind.strip():
        raise ScorerConfigError(f"{where}.kind: must be a scorer spec such as 'steps' or 'judge:<model>'")
    weight = raw.get("weight", 1.0)
    if (
        isinstance(weight, bool)
        or not isinstance(weight, int | float)
        or not math.isfinite(weight)
        or weight < 0
    ):
        raise ScorerConfigError(f"{where}.weight: must be a finite number >= 0, got {weight!r}")
    options = {str(key): value for key, value in raw.items() if key not in ("kind", "weight")}
    return BlendEntry(kind=kind.strip(), weight=float(weight), options=options, where=where)


def _load_yaml(path: Path) -> tuple[Any, dict[int, int]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScorerConfigError(f"{path}: blend config file not found") from None
    except OSError as exc:
        raise ScorerConfigError(f"{path}: cannot read blend config: {exc.strerror}") from None
    try:
        data = yaml.safe_load(text)
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" (line {mark.line + 1})" if mark is not None else ""
        raise ScorerConfigError(f"{path}: not valid YAML{at}: {getattr(exc, 'problem', exc)}") from None
    lines: dict[int, int] = {}
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if key.value == "scorers" and isinstance(value, yaml.SequenceNode):
                lines = {i: item.start_mark.line + 1 for i, item in enumerate(value.value)}
    return data, lines
