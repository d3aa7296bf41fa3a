"""The small CRM trained on groups shaped like an adaptive fine stage's, and the scorer that uses it.

The adaptive fine stage (`reso.graphs.escalation.Adaptive`) shows the CRM a subtask's first k candidates
(cheap ones first, by the cost-aware ranking), and, while their best score is below the confidence, the
same answers plus the most reliable agent not yet asked, up to k_max. A CRM fitted on groups of another
shape (say three candidates chosen by skill alone) meets a different mix of agreement and answer quality
at scoring time, and its confidence, which decides escalation, is then miscalibrated. Here the group model
learns from the prefixes of each subtask's candidates in the order they were asked by a staged pass over
the training questions (the first k, then one more at a time up to k_max), so it is fitted on exactly the
groups it will score.

Answers' priors are their models' shares right in the training records (smoothed towards the base rate),
both in fitting and in scoring: the scorer does not read an agent's per-role reputation, whose prior of
one for an agent never visited would make a rarely asked role look perfect.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from reso.reward.base import ScoreItem
from reso.reward.features import candidates_from_items, groups_of
from reso.reward.records import LabelledRecord, question_key
from reso.reward.small_crm import SmallCRM, SmallCRMConfig, SmallCRMScorer


def staged_groups(records: Sequence[LabelledRecord], k: int, k_max: int) -> list[list[int]]:
    """The groups an adaptive fine stage scores, as indices into `records`.

    Records of one subtask (same `question_key`) are taken in file order, which is the order the fine
    stage asked them: the first `k` form the first stage's group, then each further answer up to `k_max`
    adds a group of the answers so far. A subtask with fewer than `k` answers (a candidate failed, or
    the subtask had one agent) is one group of all of them.

    Raises:
        ValueError: k < 1 or k_max < k.
    """
    if k < 1 or k_max < k:
        raise ValueError(f"need 1 <= k <= k_max, got k={k}, k_max={k_max}")
    groups: list[list[int]] = []
    for members in groups_of([question_key(record) for record in records]).values():
        if len(members) < k:
            groups.append(list(members))
            continue
        groups += [list(members[:size]) for size in range(k, min(k_max, len(members)) + 1)]
    return groups


def fit_staged_crm(records: Sequence[LabelledRecord], *, k: int, k_max: int, tune: bool = True,
                   config: SmallCRMConfig | None = None) -> SmallCRM:
    """Fit the small CRM on a staged pass's records: every answer for the answer model, the staged groups
    for the group model.

    Folds (for stacking and tuning) group answers by question text, not by subtask: one sub-question
    recurs in several composites, and its answers must not sit on both sides of a fold.

    Args:
        records: a staged pass's labelled records, each subtask's in the order they were asked.
        k, k_max: the adaptive fine stage's first-stage size and its most candidates.
        tune: choose the answer and group models' settings by grouped cross-validation.
        config: the CRM's settings (default: `SmallCRMConfig()`).

    Raises:
        ValueError: no records, one label value only, or a bad k / k_max.
    """
    groups = staged_groups(records, k, k_max)
    by_text = [dataclasses.replace(record, question_id=None) for record in records]
    return SmallCRM(config or SmallCRMConfig()).fit(by_text, tune=tune, groups=groups)


class StagedCRMScorer(SmallCRMScorer):
    """Scores a subtask's candidates with a saved staged CRM; each answer's prior is its model's record in
    the CRM's training answers (unknown models get the base rate, flagged unknown)."""

    name = "staged"
    label = "staged CRM"

    def candidates(self, items: Sequence[ScoreItem]) -> list[Any]:
        # The agent's per-role reputation is left out: the DADB gives an unvisited role 1.0, so a rarely
        # asked role would look perfect; the model's record stands in as the prior.
        return [dataclasses.replace(c, reputation=None) for c in candidates_from_items(items)]
