"""Fitting the staged CRM (`reward/staged_crm.py`): the small CRM on groups shaped like a fine stage's.

The group model learns from the prefixes of each subtask's candidates in the order a staged pass over the
training questions asked them (the first k, then one more at a time up to k_max), so it is fitted on
exactly the groups the adaptive fine stage will show it; answers' priors are their models' shares right
in the training records, as the staged scorer reads them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from reso.reward.features import groups_of
from reso.reward.labelled_records import LabelledRecord, question_key
from reso.reward.small_crm import SmallCRM, SmallCRMConfig
from reso.reward.training.small_crm_fit import fit_small_crm


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
    return fit_small_crm(by_text, config or SmallCRMConfig(), tune=tune, groups=groups)
