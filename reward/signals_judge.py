"""The signals judge: which of a subtask's disagreeing answers is right, from weak signals and no labels.

Among peers, agreement alone picks the plurality; the judge adds what else is known about each answer and
combines it in two small logistic models fitted on the training side's labelled answers
(`reso.reward.training.signals_judge_fit`):

1. **Each answer alone**: the logit of its model's chance on this kind of question (its record on the
   nearest training questions, `QuestionSkills`), of its model's pooled record, the answer's length against
   the model's typical length, the features of the worked solution any model shows (`solution_features`:
   the form of the final answer, truncation, hedging, self-correction, re-checked arithmetic) and, when the
   judge has a base CRM, the logit of that CRM's score. This gives p_alone per answer.
2. **Each group of agreeing answers** (same value to a millionth, as the peer posterior groups them; one
   answer per model): how many models reached it, the sum and the best of their p_alone logits, how much
   their training errors go together (the mean phi of their wrong answers, times the pairs beyond the
   first), the strongest rival group's logit sum and size, how many groups there are and the group's share
   of the answers. The second model maps these to the probability that the group's value is right, and
   every answer of the group gets it: the fine stage keeps the most likely answer, and asks again while that
   probability is worth less than the price of another answer.

Both models are standardised logistic regressions saved as plain numbers in `signals_judge.json` (no
pickle), beside the question-skills index they read; scoring a subtask embeds its text once (MiniLM on a
CPU: a few milliseconds) and does arithmetic. An answer with no final value scores 0, as nothing can agree
with it.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from reso.agents.selection.question_skills import QuestionSkills
from reso.reward.answer_features import SOLUTION_FEATURES, solution_features
from reso.reward.answers import answers_match, extract_answer
from reso.reward.base import GroupScorer, Score, ScoreItem, Scorer
from reso.reward.calibrated_crm import logit
from reso.reward.peer_errors import SAME_VALUE, PeerErrors
from reso.reward.registry import build_scorer

JUDGE_FILE = "signals_judge.json"
SKILLS_FOLDER = "skills"
ANSWER_FEATURES = ("skill", "record", "relative_length", *SOLUTION_FEATURES)
"""The inputs of the first model (the base CRM's logit is appended when the judge has one)."""
GROUP_FEATURES = ("models", "logit_sum", "logit_best", "error_overlap", "rival_logit_sum", "rival_models",
                  "groups", "share")
"""The inputs of the second model, one row per group of agreeing answers."""
NO_RIVAL = -8.0
"""The rival logit sum of a group that has no rival: lower than any group's (logits are clipped at ±9.2)."""


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return np.asarray(1.0 / (1.0 + np.exp(-np.clip(x, -30.0, 30.0))))


@dataclass
class LinearModel:
    """A standardised logistic regression as numbers: p = sigmoid(intercept + coef · (x - mean) / scale)."""

    mean: list[float]
    scale: list[float]
    coef: list[float]
    intercept: float

    @classmethod
    def fit(cls, rows: np.ndarray, labels: np.ndarray, *, strength: float) -> LinearModel:
        """Fitted by scikit-learn (L2, inverse strength `strength`) on standardised rows."""
        from sklearn.linear_model import LogisticRegression

        if len(set(labels.tolist())) < 2:
            raise ValueError("the judge needs right and wrong answers to learn from; the records hold one kind")
        mean, scale = rows.mean(axis=0), rows.std(axis=0)
        scale = np.where(scale > 1e-9, scale, 1.0)
        model = LogisticRegression(C=strength, max_iter=5000).fit((rows - mean) / scale, labels)
        return cls(mean.tolist(), scale.tolist(), model.coef_[0].tolist(), float(model.intercept_[0]))

    def probabilities(self, rows: np.ndarray) -> np.ndarray:
        z = (rows - np.asarray(self.mean)) / np.asarray(self.scale)
        return _sigmoid(self.intercept + z @ np.asarray(self.coef))


@dataclass
class JudgeParts:
    """What the judge read on the training side, besides the question-skills index."""

    answer_model: LinearModel
    group_model: LinearModel
    records: dict[str, float]
    """Each model's pooled record (share right, shrunk towards one half)."""
    typical_length: dict[str, float]
    """Each model's median answer length in characters."""
    error_phi: dict[str, float] = field(default_factory=dict)
    """The phi coefficient of two models' wrong answers, by `pair_key`."""
    discrimination: float = 0.0

    def phi(self, a: str, b: str) -> float:
        return self.error_phi.get(PeerErrors.pair_key(a, b), 0.0)


def answer_rows(items: Sequence[ScoreItem], skill: Mapping[str, float], parts: JudgeParts,
                base_scores: Sequence[float] | None = None) -> np.ndarray:
    """The first model's inputs for each item (module docstring); `skill` by model name."""
    texts = [item.answer for item in items]
    features = solution_features([item.subtask for item in items], texts)
    rows = []
    for item, text, solution in zip(items, texts, features, strict=True):
        model = item.model or ""
        record = parts.records.get(model, 0.5)
        typical = parts.typical_length.get(model) or max(len(text), 1)
        rows.append([logit(skill.get(model, record)), logit(record),
                     math.log((len(text) + 1.0) / (typical + 1.0)), *solution])
    matrix = np.asarray(rows, dtype=np.float64).reshape(len(items), len(ANSWER_FEATURES))
    if base_scores is not None:
        matrix = np.column_stack([matrix, [logit(s) for s in base_scores]])
    return matrix


def agreeing_groups(values: Sequence[str | None], models: Sequence[str]) -> list[list[int]]:
    """Indices of the answers grouped by value (to a millionth), one answer per model: a model's repeated
    answer (another role's replay) neither confirms nor joins; answers without a value stay out."""
    groups: list[list[int]] = []
    seen: set[str] = set()
    for i, value in enumerate(values):
        if value is None or models[i] in seen:
            continue
        seen.add(models[i])
        home = next((g for g in groups if answers_match(value, values[g[0]] or "", rel_tol=SAME_VALUE)), None)
        if home is None:
            groups.append([i])
        else:
            home.append(i)
    return groups


def group_rows(groups: Sequence[Sequence[int]], alone: Sequence[float], models: Sequence[str],
               parts: JudgeParts) -> np.ndarray:
    """The second model's inputs for each group (module docstring); `alone` is p_alone by answer index."""
    sums = [sum(logit(alone[i]) for i in g) for g in groups]
    answered = sum(len(g) for g in groups)
    rows = []
    for index, group in enumerate(groups):
        pairs = [(a, b) for n, a in enumerate(group) for b in group[n + 1:]]
        overlap = (sum(parts.phi(models[a], models[b]) for a, b in pairs) / len(pairs)) * (len(group) - 1) \
            if pairs else 0.0
        rivals = [k for k in range(len(groups)) if k != index]
        rows.append([len(group), sums[index], max(logit(alone[i]) for i in group), overlap,
                     max((sums[k] for k in rivals), default=NO_RIVAL),
                     max((len(groups[k]) for k in rivals), default=0), len(groups), len(group) / answered])
    return np.asarray(rows, dtype=np.float64).reshape(len(groups), len(GROUP_FEATURES))


class SignalsJudge(GroupScorer):
    """The probability that each answer of a subtask is right, from weak signals (module docstring)."""

    name = "signals"

    def __init__(self, directory: Path | str | None = None, *, parts: JudgeParts | None = None,
                 skills: QuestionSkills | None = None, base: Scorer | None = None, base_spec: str = "") -> None:
        if directory is not None:
            folder = Path(directory)
            try:
                saved = json.loads((folder / JUDGE_FILE).read_text(encoding="utf-8"))
                parts = _parts_from_json(saved)
            except (OSError, KeyError, TypeError, ValueError) as error:
                raise ValueError(f"{folder}: not a saved signals judge ({error})") from error
            base_spec = saved.get("base", "")
            skills = QuestionSkills.load(folder / SKILLS_FOLDER)
        if parts is None or skills is None:
            raise ValueError("a signals judge needs its fitted parts and question skills, or a saved folder")
        if base is None and base_spec:
            base = build_scorer(base_spec)
        self.parts, self.skills, self.base, self.base_spec = parts, skills, base, base_spec
        self.discrimination = parts.discrimination
        self.blocking = True  # it embeds the subtask's text

    def alone(self, items: Sequence[ScoreItem]) -> list[float]:
        """p_alone of each item, all of one subtask (the first model)."""
        skill = self.skills.estimate_text(items[0].subtask, self.parts.records)
        base = None
        if self.base is not None:
            base = [s.value for s in self.base.score_detailed(
                [dataclasses.replace(item, group=f"{item.group or item.subtask}#alone{i}")
                 for i, item in enumerate(items)])]
        return self.parts.answer_model.probabilities(answer_rows(items, skill, self.parts, base)).tolist()

    def score_group(self, group: list[ScoreItem]) -> list[Score]:
        values = [extract_answer(item.answer) if isinstance(item.answer, str) else None for item in group]
        models = [item.model or item.agent_id for item in group]
        groups = agreeing_groups(values, models)
        scores = [Score(0.0, "no final answer") if value is None else Score(0.0) for value in values]
        if not groups:
            return scores
        alone = self.alone(group)
        right = self.parts.group_model.probabilities(group_rows(groups, alone, models, self.parts))
        value_right = {i: float(p) for g, p in zip(groups, right, strict=True) for i in g}
        for i, value in enumerate(values):
            if value is None:
                continue
            # A repeated answer of one model scores as its group does (it agrees, it does not confirm).
            home = value_right.get(i)
            if home is None:
                home = next((value_right[g[0]] for g in groups
                             if answers_match(value, values[g[0]] or "", rel_tol=SAME_VALUE)), 0.0)
            scores[i] = Score(home)
        return scores

    def save(self, directory: Path | str) -> Path:
        folder = Path(directory)
        folder.mkdir(parents=True, exist_ok=True)
        self.skills.save(folder / SKILLS_FOLDER)
        (folder / JUDGE_FILE).write_text(json.dumps({**_parts_to_json(self.parts), "base": self.base_spec},
                                                    indent=1), encoding="utf-8")
        return folder


def _parts_to_json(parts: JudgeParts) -> dict[str, Any]:
    return {"answer_features": [*ANSWER_FEATURES], "group_features": [*GROUP_FEATURES],
            "answer_model": vars(parts.answer_model), "group_model": vars(parts.group_model),
            "records": parts.records, "typical_length": parts.typical_length, "error_phi": parts.error_phi,
            "discrimination": parts.discrimination}


def _parts_from_json(saved: Mapping[str, Any]) -> JudgeParts:
    if list(saved["group_features"]) != list(GROUP_FEATURES) or \
            list(saved["answer_features"]) != list(ANSWER_FEATURES):
        raise ValueError("saved with other features than this version reads: fit it again")
    return JudgeParts(LinearModel(**saved["answer_model"]), LinearModel(**saved["group_model"]),
                      {str(k): float(v) for k, v in saved["records"].items()},
                      {str(k): float(v) for k, v in saved["typical_length"].items()},
                      {str(k): float(v) for k, v in saved["error_phi"].items()}, float(saved["discrimination"]))
