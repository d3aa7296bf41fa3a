"""The fine stages the main job compares, and which one its ReSo row uses: chosen on the training side.

Every stage asks the way the budget knob says (`reso.graphs.priced_asking`: one more candidate while its
expected gain in being right × the value of a right answer exceeds its price); they differ in who judges
the answers, which is what that gain is read from:

- `crm`: the calibrated CRM judges each answer (its probability of being right, answer by answer).
- `peer`: the peer posterior (`reso.reward.peer_posterior`) over the calibrated CRM weighs who agrees with
  whom, and its table of how the models' mistakes go together lowers the gain of asking a model that fails
  with those asked.
- `peer on records`: the same, each answer weighed by its model's training record instead of the CRM's
  judgement of it.
- `judge`: the signals judge (`reso.reward.signals_judge`) weighs each group of agreeing answers by its
  models' records on the nearest training questions, the answers' texts and how the models' mistakes go
  together, fitted on the same labelled answers.

`choose_on_validation` (`reso.evals.jobs.validation`) picks one on a validation part of the training side;
where that cannot run (no recorded answers to refit the CRM on), `choose_by_record` applies a rule read from
the trained DADB: the peer stage when the two best-recorded models are within `PEER_MARGIN` of each other,
else the CRM stage. The stages not chosen run as rows of their own, so every table shows what the
choice gained or cost.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path
from typing import Any

from reso.evals.methods import MethodError, best_recorded
from reso.graphs.escalation import PEER_MARGIN
from reso.graphs.team import Team
from reso.reward.labelled_records import LabelledRecord
from reso.reward.reliability_vote import record_reliability


class FineStage(StrEnum):
    """A fine stage the main job compares (see the module docstring); iterated in this order."""

    CRM = "crm"
    PEER = "peer"
    PEER_ON_RECORDS = "peer on records"
    JUDGE = "judge"


# What a lone answer is worth by its model's record alone: the reliability vote scores one answer so.
RECORDS_ONLY = "reliability"


# How the tables name a ReSo row run with each stage.
STAGE_LABELS: dict[FineStage, str] = {FineStage.CRM: "CRM stage", FineStage.PEER: "peer stage",
                                      FineStage.PEER_ON_RECORDS: "peer stage on records",
                                      FineStage.JUDGE: "judge stage"}


def stage_changes(crm: str, answers: Sequence[LabelledRecord], folder: Path,
                  embedder: str = "minilm") -> dict[FineStage, dict[str, Any]]:
    """Each stage's changes to ReSo's test settings, given the fitted CRM `crm`. The two peer posteriors
    share one pairwise error table, counted on `answers` (labelled answers of the pool's models to the
    training side's questions), and the judge is fitted on them (its question skills embedded by `embedder`);
    all are saved under `folder`."""
    from reso.agents.selection.embeddings import load_embedder
    from reso.reward.peer_errors import PeerErrors
    from reso.reward.peer_posterior import save_peer_posterior
    from reso.reward.training.signals_judge_fit import fit_signals_judge

    errors = PeerErrors.fit(answers)
    on_crm, on_records = folder / "crm-peer", folder / "crm-peer-records"
    save_peer_posterior(on_crm, crm, errors)
    save_peer_posterior(on_records, RECORDS_ONLY, errors)
    judge = fit_signals_judge(answers, load_embedder(embedder)).save(folder / "judge")
    return {FineStage.CRM: {"reward.scorer": crm}, FineStage.PEER: {"reward.scorer": f"peer:{on_crm}"},
            FineStage.PEER_ON_RECORDS: {"reward.scorer": f"peer:{on_records}"},
            FineStage.JUDGE: {"reward.scorer": f"signals:{judge}"}}


def choose_by_record(team: Team) -> tuple[FineStage, str]:
    """The stage by the rule of the module docstring, and why (one line)."""
    try:
        first, second = best_recorded(team, 2)
    except MethodError:
        return FineStage.CRM, f"fewer than two models with a training record: the {STAGE_LABELS[FineStage.CRM]}"
    records = [record_reliability(*(team.model_record(agent) or (0.0, 0))) for agent in (first, second)]
    gap = records[0] - records[1]
    names = [team.agent(agent).model.model_name for agent in (first, second)]
    why = (f"the two best training records, {names[0]} {records[0]:.2f} and {names[1]} {records[1]:.2f}, are "
           f"{gap:.2f} apart")
    if gap <= PEER_MARGIN:
        return FineStage.PEER, f"{why}: peers, the peer stage"
    return FineStage.CRM, f"{why}: one model ahead, the CRM stage"
