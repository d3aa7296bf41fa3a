"""The source questions each item was built from: what decides how a comparison's intervals are computed.

A composite's dataset item names the question of each sub-question (`meta["step_question_ids"]`, the ids of
the source file's questions, written by the synthesis and by the release loader); result rows do not, so
they are read from the dataset a run's summary names. Where some source question is shared by two items,
the intervals come from the cluster-robust variance by source question
(`reso.evals.reports.shared_questions`); items that share none are independent and are resampled one by one
by the paired bootstrap (`reso.evals.reports.stats`), as are items of a dataset that does not name its
sources.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reso.evals.datasets import Problem

CLUSTER_METHOD = "cluster-robust by source question (shared questions)"
CLUSTER_INTERVALS = f"{CLUSTER_METHOD}, normal ±1.96 standard errors"
"""How the intervals of `CLUSTER_METHOD` are made, in words for captions."""
ITEM_METHOD = "bootstrap by item"
NO_SOURCE_IDS = f"{ITEM_METHOD} (the items do not name their source questions)"
NOTHING_SHARED = f"{ITEM_METHOD} (no source question is shared by two items)"


@dataclass(frozen=True)
class Resampling:
    """How a comparison's intervals treat its items: each item's source question ids, for the cluster-robust
    variance (None: the bootstrap item by item), and the method's name for the output."""

    clusters: list[tuple[str, ...]] | None
    method: str
    source_questions: int | None = None
    """How many distinct source questions the items use (None where they do not name them)."""


def resampling(problems: Mapping[str, Problem] | None, ids: Sequence[str]) -> Resampling:
    """How the intervals of the items `ids` are computed: cluster-robust by source question where every
    item names its sources and some source is shared by two items, else the bootstrap item by item (and
    why)."""
    if problems is None or any(item not in problems for item in ids):
        return Resampling(None, NO_SOURCE_IDS)
    clusters = [problems[item].source_ids() for item in ids]
    if not all(clusters):
        return Resampling(None, NO_SOURCE_IDS)
    uses = Counter(source for sources in clusters for source in sources)
    if all(count == 1 for count in uses.values()):
        return Resampling(None, NOTHING_SHARED, len(uses))
    return Resampling(clusters, CLUSTER_METHOD, len(uses))


def dataset_items(summaries: Iterable[Mapping[str, Any]],
                  folders: Iterable[Path] | None = None) -> dict[str, Problem] | None:
    """The items, by id, of the first dataset named by the summaries that loads (a registered name, or a
    file that is still there); None when none does. `folders` are the summaries' run folders, which a
    dataset file's path in a summary is relative to (`reso.evals.portable`)."""
    from reso.evals.datasets import load_dataset
    from reso.evals.portable import resolved_in

    pairs = zip(summaries, folders, strict=True) if folders is not None else ((s, None) for s in summaries)
    names = (resolved_in(folder, str(s["dataset"])) if folder is not None else str(s["dataset"])
             for s, folder in pairs if s.get("dataset"))
    for name in dict.fromkeys(names):
        try:
            return {problem.id: problem for problem in load_dataset(name)}
        except (ValueError, OSError):  # DatasetError is a ValueError: unknown name, moved or damaged file
            continue
    return None
