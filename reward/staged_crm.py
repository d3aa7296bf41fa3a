"""The scorer of the small CRM trained on groups shaped like an adaptive fine stage's.

The adaptive fine stage (`reso.graphs.escalation.Adaptive`) shows the CRM a subtask's first k candidates
(cheap ones first, by the cost-aware ranking), and, while their best score is below the confidence, the
same answers plus the most reliable agent not yet asked, up to k_max. A CRM fitted on groups of another
shape (say three candidates chosen by skill alone) meets a different mix of agreement and answer quality
at scoring time, and its confidence, which decides escalation, is then miscalibrated. Here the group model
learns from the prefixes of each subtask's candidates in the order they were asked by a staged pass over
the training questions (the first k, then one more at a time up to k_max), so it is fitted on exactly the
groups it will score (`fit_staged_crm`, in `reward/training/staged_crm_fit.py`).

Answers' priors are their models' shares right in the training records (smoothed towards the base rate),
both in fitting and in scoring: the scorer does not read an agent's per-role reputation, whose prior of
one for an agent never visited would make a rarely asked role look perfect.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from reso.reward.base import ScoreItem
from reso.reward.features import candidates_from_items
from reso.reward.small_crm import SmallCRMScorer


class StagedCRMScorer(SmallCRMScorer):
    """Scores a subtask's candidates with a saved staged CRM; each answer's prior is its model's record in
    the CRM's training answers (unknown models get the base rate, flagged unknown)."""

    name = "staged"
    label = "staged CRM"

    def candidates(self, items: Sequence[ScoreItem]) -> list[Any]:
        # The agent's per-role reputation is left out: the DADB gives an unvisited role 1.0, so a rarely
        # asked role would look perfect; the model's record stands in as the prior.
        return [dataclasses.replace(c, reputation=None) for c in candidates_from_items(items)]
