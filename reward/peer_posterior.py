"""The peer posterior: the probability that each distinct answer of a subtask is right, from who reached it.

Candidates are grouped by final answer. Each answer is first judged on its own by a base CRM (the calibrated
CRM: the answer's own evidence and its model's record), giving p_i. A group c of agreeing answers from
distinct models then has the log-odds

    L_c = logit(p_1) + sum over later members k of [logit(p_k) - dependence(j, k) + ln(1 / q_jk)],

where j is the earlier member whose mistakes go most with k's: `q_jk` is how often two wrong answers of
that pair coincide, and `dependence` how much less an agreement of that pair tells than an independent
one's (both measured on the training side, `reso.reward.peer_errors`). The posterior of c against every
other group and "none of them is right" is exp(L_c) / (1 + sum_d exp(L_d)), and every answer of a group
gets its group's posterior: the fine stage keeps the best answer, whichever candidate gave it first.

Two answers agree when their values are the same to a millionth (as the linked composites grade), not
within the checker's default 1 %. With one answer the score is the base CRM's. Agents of one model count once (two roles of one model repeat
one recorded answer; they do not confirm it). An answer the base CRM failed on keeps that failure. The
table is counted on the training side by `fit_peer_posterior` (`reward/training/peer_posterior_fit.py`).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Sequence
from pathlib import Path

from reso.reward.answers import answers_match, extract_answer
from reso.reward.base import GroupScorer, Score, ScoreItem, Scorer
from reso.reward.calibrated_crm import logit
from reso.reward.peer_errors import SAME_VALUE, PeerErrors
from reso.reward.registry import build_scorer

PEER_FILE = "peer.json"
class PeerPosteriorScorer(GroupScorer):
    """Posterior probability that each answer is right, from the base CRM and the peers that agree with it."""

    name = "peer"

    def __init__(self, directory: Path | str | None = None, *, base: Scorer | None = None, base_spec: str = "",
                 errors: PeerErrors | None = None, rel_tol: float = SAME_VALUE) -> None:
        if directory is not None:
            saved = json.loads((Path(directory) / PEER_FILE).read_text(encoding="utf-8"))
            base_spec = saved["base"]
            errors = PeerErrors.load(directory)
        if base is None:
            if not base_spec:
                raise ValueError("a peer posterior needs a base scorer or a saved folder")
            base = build_scorer(base_spec)
        self.base = base
        self.base_spec = base_spec
        self.errors = errors if errors is not None else PeerErrors()
        self.discrimination = base.discrimination  # a lone answer's score is the base's
        self.rel_tol = rel_tol
        self.blocking = base.blocking

    def score_group(self, group: list[ScoreItem]) -> list[Score]:
        key = group[0].group or group[0].subtask
        # Each answer alone: the base CRM's evidence must not already count the agreement counted here.
        alone = self.base.score_detailed(
            [dataclasses.replace(item, group=f"{key}#alone{i}") for i, item in enumerate(group)])
        values = [extract_answer(item.answer) if isinstance(item.answer, str) else None for item in group]
        clusters: list[list[int]] = []
        value_of: dict[int, str] = {}
        for i, value in enumerate(values):
            if value is None or alone[i].failed:
                continue
            value_of[i] = value
            home = next((c for c in clusters if answers_match(value, value_of[c[0]], rel_tol=self.rel_tol)), None)
            if home is None:
                clusters.append([i])
            else:
                home.append(i)
        logits = [self._support(group, alone, cluster) for cluster in clusters]
        top = max([0.0, *logits])
        norm = math.exp(-top) + sum(math.exp(x - top) for x in logits)
        scores = [s if s.failed else Score(0.0, "no final answer found") for s in alone]
        for cluster, support in zip(clusters, logits, strict=True):
            posterior = math.exp(support - top) / norm if len(clusters) > 1 or len(cluster) > 1 else None
            for i in cluster:
                scores[i] = Score(posterior) if posterior is not None else alone[i]
        return scores

    def _support(self, group: Sequence[ScoreItem], alone: Sequence[Score], cluster: Sequence[int]) -> float:
        """L_c of the module docstring, each model counted once (its best-scored answer)."""
        by_model: dict[str, int] = {}
        for i in cluster:
            name = group[i].model or f"item:{i}"
            if name not in by_model or alone[i].value > alone[by_model[name]].value:
                by_model[name] = i
        members = sorted(by_model.values())
        total = logit(alone[members[0]].value)
        for position, k in enumerate(members[1:], start=1):
            earlier = [group[j].model for j in members[:position]]
            model = group[k].model
            closest = max(earlier, key=lambda other: self.errors.correlation(other, model))
            total += (logit(alone[k].value) - self.errors.dependence(closest, model)
                      + math.log(1.0 / self.errors.coincidence(closest, model)))
        return total

    def save(self, directory: Path | str) -> Path:
        return save_peer_posterior(directory, self.base_spec, self.errors)


def save_peer_posterior(directory: Path | str, base_spec: str, errors: PeerErrors) -> Path:
    """Write the peer posterior over `base_spec` with the table `errors` to `directory` (what `peer:<dir>`
    loads), without building the base scorer."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    errors.save(folder)
    path = folder / PEER_FILE
    path.write_text(json.dumps({"base": base_spec}, indent=2), encoding="utf-8")
    return path


def peer_errors(scorer: Scorer) -> PeerErrors | None:
    """The pairwise error table a scorer carries (a peer posterior's), for the asking policy to read."""
    return scorer.errors if isinstance(scorer, PeerPosteriorScorer) else None
