"""The fine stages the main job compares, and which one its ReSo row uses: chosen from the training side.

- `adaptive`: the calibrated CRM scores the first stage's answers in their group, and an escalation asks a
  model more likely right than the best answer so far (`reso.graphs.escalation.Adaptive`, `ranked`).
- `peer`: the peer posterior (`reso.reward.peer_posterior`) over the calibrated CRM weighs who agrees with
  whom, and an escalation asks the peer whose mistakes go least with those already asked (`diverse`), up to
  one more answer than the adaptive stage allows: agreement of peers is evidence only when it is asked for.

The rule, read from the trained DADB before any test run: a benchmark whose two best-recorded models are
within `PEER_MARGIN` of each other is one of peers, and the peer stage answers it; a benchmark with one
model far ahead (o1-mini on MATH level 5) is one for the adaptive stage, which escalates to that model.
The other stage runs as a variant row, so every table shows what the choice gained or cost.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from reso.evals.methods import MethodError, best_recorded
from reso.graphs.escalation import PEER_MARGIN
from reso.graphs.team import Team
from reso.reward.records import LabelledRecord
from reso.reward.reliability_vote import record_reliability

Stage = Literal["adaptive", "peer"]
STAGE_LABELS: dict[Stage, str] = {"adaptive": "adaptive stage", "peer": "peer stage"}


def peer_settings(peer_scorer: str, k_max: int) -> dict[str, Any]:
    """The test settings that make a ReSo run use the peer stage (`k_max`: the adaptive stage's)."""
    return {"scorer": peer_scorer, "escalate_to": "diverse", "k_max": k_max + 1}


def choose_stage(team: Team) -> tuple[Stage, str]:
    """The stage for a benchmark, by the rule of the module docstring, and why (one line)."""
    try:
        first, second = best_recorded(team, 2)
    except MethodError:
        return "adaptive", "fewer than two models with a training record: the adaptive stage"
    records = [record_reliability(*(team.model_record(agent) or (0.0, 0))) for agent in (first, second)]
    gap = records[0] - records[1]
    names = [team.agent(agent).model.model_name for agent in (first, second)]
    why = (f"the two best training records, {names[0]} {records[0]:.2f} and {names[1]} {records[1]:.2f}, are "
           f"{gap:.2f} apart")
    if gap <= PEER_MARGIN:
        return "peer", f"{why}: peers, the peer stage"
    return "adaptive", f"{why}: one model ahead, the adaptive stage"


def fit_peer(base_scorer: str, answers: Sequence[LabelledRecord], out: Path) -> str:
    """The peer posterior over `base_scorer`, its pairwise error table counted on `answers` (labelled answers
    of the pool's models to the training side's questions), saved to `out`; its scorer spec."""
    from reso.reward.peer_posterior import fit_peer_posterior

    fit_peer_posterior(base_scorer, answers).save(out)
    return f"peer:{out}"
