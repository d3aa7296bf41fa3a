"""Fit the signals judge (`reso.reward.signals_judge`) on labelled answers of the training side.

The group model learns from the answer model's probabilities, so those must be what the answer model says
of answers it never saw: the questions are dealt into folds, and each fold's answers are scored by an answer
model, question skills and pooled records fitted on the other folds (cross-fitting). Its groups are the
answers of `team` to each question when a team is named (the models whose answers the judge will choose
among), else random subsets of one, two, three and five of the models that answered, so that the judge
reads a lone answer and a crowd alike.
"""

from __future__ import annotations

import dataclasses
import random
import statistics
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from reso.agents.selection.embeddings import Embedder
from reso.agents.selection.question_skills import QuestionSkills
from reso.reward.answers import extract_answer
from reso.reward.base import ScoreItem, Scorer
from reso.reward.labelled_records import LabelledRecord, question_key
from reso.reward.peer_errors import PeerErrors
from reso.reward.reliability_vote import record_reliability
from reso.reward.signals_judge import (
    JudgeParts,
    LinearModel,
    SignalsJudge,
    agreeing_groups,
    answer_rows,
    group_rows,
)
from reso.reward.training.calibration_fit import within_model_discrimination

FOLDS = 5
SUBSET_SIZES = (1, 2, 3, 5)
ANSWER_STRENGTH = 0.1
"""The answer model's inverse L2 strength: dozens of correlated text features over a few thousand answers."""
GROUP_STRENGTH = 1.0
"""The group model's: eight features over a thousand or so groups."""


@dataclasses.dataclass
class AnsweredQuestions:
    """Labelled answers by question (`question_key`), one per model (its first), in order of first appearance."""

    keys: list[str]
    texts: list[str]
    answers: list[dict[str, LabelledRecord]]
    models: list[str]

    @classmethod
    def of(cls, records: Sequence[LabelledRecord]) -> AnsweredQuestions:
        by_question: dict[str, dict[str, LabelledRecord]] = defaultdict(dict)
        texts: dict[str, str] = {}
        for record in records:
            if record.model:
                key = question_key(record)
                by_question[key].setdefault(record.model, record)
                texts.setdefault(key, record.instruction)
        keys = list(by_question)
        return cls(keys, [texts[k] for k in keys], [by_question[k] for k in keys],
                   sorted({m for answers in by_question.values() for m in answers}))

    def right(self) -> np.ndarray:
        """Questions × models: 1 right, 0 wrong, NaN not answered."""
        matrix = np.full((len(self.texts), len(self.models)), np.nan)
        column = {m: j for j, m in enumerate(self.models)}
        for i, answers in enumerate(self.answers):
            for model, record in answers.items():
                matrix[i, column[model]] = float(record.label)
        return matrix

    def record(self, model: str) -> tuple[int, int]:
        """(right, questions) of `model` over every question: one it skipped counts as wrong."""
        return sum(a[model].label for a in self.answers if model in a), len(self.answers)

    def coverage(self, model: str) -> float:
        """The share of the questions `model` answered."""
        return sum(model in a for a in self.answers) / max(len(self.answers), 1)


def _records(right: np.ndarray, models: Sequence[str]) -> dict[str, float]:
    return {m: record_reliability(float(np.nansum(right[:, j])), float(np.sum(~np.isnan(right[:, j]))))
            for j, m in enumerate(models)}


def _item(record: LabelledRecord) -> ScoreItem:
    return ScoreItem(subtask=record.instruction, answer=record.answer, context=record.context,
                     agent_id=record.agent_id or record.model or "", model=record.model)


def _folds(count: int, seed: int) -> list[int]:
    order = list(range(count))
    random.Random(seed).shuffle(order)
    fold = [0] * count
    for position, question in enumerate(order):
        fold[question] = position % FOLDS
    return fold


def _answer_matrix(questions: AnsweredQuestions, right: np.ndarray, vectors: np.ndarray, fold: Sequence[int],
                   parts: JudgeParts, embedder: Embedder,
                   base: Scorer | None) -> tuple[np.ndarray, list[tuple[int, str]]]:
    """Every answer's first-model inputs, its skill and record read without its own fold (`right`: the
    questions' outcomes); and which (question, model) each row is."""
    rows: list[np.ndarray] = []
    where: list[tuple[int, str]] = []
    for f in sorted(set(fold)):
        inside = [i for i, g in enumerate(fold) if g == f]
        others = [i for i, g in enumerate(fold) if g != f]
        skills = QuestionSkills(vectors[others], questions.models, right[others], embedder.name, embedder=embedder)
        in_fold = dataclasses.replace(parts, records=_records(right[others], questions.models))
        for i in inside:
            models = sorted(questions.answers[i])
            items = [_item(questions.answers[i][m]) for m in models]
            base_scores = None
            if base is not None:
                base_scores = [s.value for s in base.score_detailed(
                    [dataclasses.replace(item, group=f"q{i}#alone{n}") for n, item in enumerate(items)])]
            rows.append(answer_rows(items, skills.estimate(vectors[i], in_fold.records), in_fold, base_scores))
            where.extend((i, m) for m in models)
    return np.vstack(rows), where


def _groups_of(answers: dict[str, LabelledRecord], team: Sequence[str] | None,
               chooser: random.Random) -> list[list[str]]:
    if team is not None:
        members = [m for m in team if m in answers]
        return [members] if members else []
    models = sorted(answers)
    return [chooser.sample(models, size) for size in SUBSET_SIZES if size <= len(models)]


def _group_matrix(questions: AnsweredQuestions, alone: dict[tuple[int, str], float], parts: JudgeParts,
                  team: Sequence[str] | None, seed: int) -> tuple[np.ndarray, np.ndarray]:
    chooser = random.Random(seed)
    rows: list[np.ndarray] = []
    labels: list[int] = []
    for i, answers in enumerate(questions.answers):
        for members in _groups_of(answers, team, chooser):
            values = [extract_answer(answers[m].answer) for m in members]
            groups = agreeing_groups(values, members)
            if not groups:
                continue
            rows.append(group_rows(groups, [alone[(i, m)] for m in members], members, parts))
            labels.extend(answers[members[g[0]]].label for g in groups)
    if not rows:
        raise ValueError("no training answer has a final value to group")
    return np.vstack(rows), np.asarray(labels)


def fit_signals_judge(records: Sequence[LabelledRecord], embedder: Embedder, *,
                      team: Sequence[str] | None = None, base: Scorer | None = None, base_spec: str = "",
                      seed: int = 0) -> SignalsJudge:
    """The judge fitted on `records` (labelled answers of several models to the training side's questions).

    Args:
        records: One or more answers per question, each with its model's name and label.
        embedder: What embeds the questions for the question skills (the selector's, usually MiniLM).
        team: The models whose answers the judge will choose among, when known (module docstring).
        base: A CRM whose score of each answer alone is one more input (`base_spec` rebuilds it on load).
        seed: The folds' and the subsets' seed.

    Raises:
        ValueError: No usable answers, or answers all right or all wrong.
    """
    questions = AnsweredQuestions.of(records)
    if not questions.answers:
        raise ValueError("no labelled answers with a model name to fit the judge on")
    right = questions.right()
    vectors = np.asarray(embedder.embed(questions.texts))
    errors = PeerErrors.fit(records)
    lengths: dict[str, list[int]] = defaultdict(list)
    for answers in questions.answers:
        for model, record in answers.items():
            lengths[model].append(len(record.answer))
    placeholder = LinearModel([], [], [], 0.0)
    parts = JudgeParts(placeholder, placeholder, {}, {m: float(statistics.median(v)) for m, v in lengths.items()},
                       {PeerErrors.pair_key(a, b): errors.correlation(a, b)
                        for n, a in enumerate(questions.models) for b in questions.models[n + 1:]})
    fold = _folds(len(questions.texts), seed)
    matrix, where = _answer_matrix(questions, right, vectors, fold, parts, embedder, base)
    labels = np.asarray([questions.answers[i][m].label for i, m in where])
    out_of_fold = np.zeros(len(where))
    for f in range(FOLDS):
        held = np.asarray([fold[i] == f for i, _ in where])
        if held.any() and (~held).any():
            out_of_fold[held] = LinearModel.fit(matrix[~held], labels[~held], strength=ANSWER_STRENGTH) \
                .probabilities(matrix[held])
    parts.answer_model = LinearModel.fit(matrix, labels, strength=ANSWER_STRENGTH)
    parts.records = _records(right, questions.models)
    alone = {key: float(p) for key, p in zip(where, out_of_fold, strict=True)}
    group_matrix, group_labels = _group_matrix(questions, alone, parts, team, seed)
    parts.group_model = LinearModel.fit(group_matrix, group_labels, strength=GROUP_STRENGTH)
    parts.discrimination = within_model_discrimination([m for _, m in where], out_of_fold.tolist(),
                                                       labels.tolist())
    skills = QuestionSkills(vectors, questions.models, right, embedder.name, embedder=embedder)
    return SignalsJudge(parts=parts, skills=skills, base=base, base_spec=base_spec)
