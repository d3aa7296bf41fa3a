"""A run's gain over a reference run split by cause: the composites one gets right and the other loses, by
whether the loser lost it to a missing recording or to a wrong answer (`reso.evals.reports.recordings`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from reso.evals.datasets import Problem
from reso.evals.reports.compare import Run
from reso.evals.reports.recordings import linked_steps, missed_recording


def gain_by_cause(run: Run, reference: Run, ids: Sequence[str],
                  problems: Mapping[str, Problem] | None = None) -> dict[str, int]:
    """In composites over the items `ids`: those `run` gets right and `reference` loses, by the reference's
    cause (`won_*`), and minus those `reference` gets right and `run` loses, by the run's cause (`lost_*`);
    `net` is their sum, the accuracy difference times the items. A cause is a missing recording where the
    loser left a sub-question unanswered for want of a recording of it as originally posed
    (`missed_recording`), else a wrong answer. `problems` tells which steps are linked (default: any)."""
    counts = {"won_missing_recording": 0, "won_wrong_answer": 0, "lost_missing_recording": 0,
              "lost_wrong_answer": 0}
    for item in ids:
        ours, theirs = run.rows[item], reference.rows[item]
        if bool(ours["correct"]) == bool(theirs["correct"]):
            continue
        loser, side, sign = (theirs, "won", 1) if ours["correct"] else (ours, "lost", -1)
        linked = linked_steps(problems[item]) if problems is not None and item in problems else None
        cause = "missing_recording" if missed_recording(loser, linked) else "wrong_answer"
        counts[f"{side}_{cause}"] += sign
    return {**counts, "net": sum(counts.values())}
