"""How the mistakes of two models go together: measured on labelled answers to the same questions.

Among peers (models of similar skill) the evidence for an answer is how many independent models reach it,
and "independent" is the question: two models of one family often make the same mistake. For every pair
of models that answered the same questions this table keeps

- how often they were wrong together, against how often each was wrong (the phi coefficient of their
  wrongness: 0 when one's mistakes say nothing of the other's, 1 when they always fail together), and
- how often two wrong answers of theirs to one question are the same value (`coincidence`): the chance
  that their agreement is a shared mistake rather than the right answer.

Both are shrunk towards the table's pooled rate with a few pseudo-questions, so a pair seen on three
questions is read as an average pair, not as proof. Written here because the pairwise statistics LLM
ensembles need are a few counts over records that no maintained library keeps in this form.
"""

from __future__ import annotations

import itertools
import json
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path

from reso.reward.answers import answers_match, extract_answer
from reso.reward.labelled_records import LabelledRecord, question_key

PEER_ERRORS_FILE = "peer_errors.json"
# How many pseudo-questions of the pooled rate a pair's own counts are blended with.
PRIOR_QUESTIONS = 5.0
# How close two numeric answers must be to count as the same value: as the linked composites grade them
# (1e-6), not the checker's default 1 %, which would merge 226 and 228.
SAME_VALUE = 1e-6
# Bounds on a coincidence: 0 would make an agreement proof, 1 would make it worthless.
COINCIDENCE_BOUNDS = (0.02, 0.9)


@dataclass
class PairCounts:
    """What two models did on the questions both answered."""

    both: int = 0
    """Questions both answered."""
    wrong_a: int = 0
    wrong_b: int = 0
    wrong_together: int = 0
    """Questions both answered wrong."""
    wrong_both: int = 0
    """Questions both answered wrong, with a final value each."""
    same_wrong: int = 0
    """Of those, questions where the two wrong values are the same."""


def _phi(counts: PairCounts) -> float | None:
    """The phi coefficient of the two models' wrongness; None when either is always right or always wrong."""
    n = counts.both
    if n == 0:
        return None
    pa, pb, pab = counts.wrong_a / n, counts.wrong_b / n, counts.wrong_both / n
    spread = pa * (1 - pa) * pb * (1 - pb)
    return (pab - pa * pb) / math.sqrt(spread) if spread > 0 else None


@dataclass
class PeerErrors:
    """Pairwise error statistics of the models of a pool, by model name (see the module docstring)."""

    pairs: dict[str, PairCounts] = field(default_factory=dict)
    """Counts by `pair_key(a, b)`."""

    @staticmethod
    def pair_key(a: str, b: str) -> str:
        return "\t".join(sorted((a, b)))

    @classmethod
    def fit(cls, records: Iterable[LabelledRecord]) -> PeerErrors:
        """Count every pair of models over the questions both answered (one answer per model and question:
        a question that recurs across composites counts once)."""
        by_question: dict[str, dict[str, tuple[bool, str | None]]] = defaultdict(dict)
        for record in records:
            if record.model:
                wrong = not record.label
                by_question[question_key(record)].setdefault(
                    record.model, (wrong, extract_answer(record.answer) if wrong else None))
        pairs: dict[str, PairCounts] = defaultdict(PairCounts)
        for answers in by_question.values():
            for a, b in itertools.combinations(sorted(answers), 2):
                (wrong_a, value_a), (wrong_b, value_b) = answers[a], answers[b]
                counts = pairs[cls.pair_key(a, b)]
                counts.both += 1
                counts.wrong_a += wrong_a
                counts.wrong_b += wrong_b
                counts.wrong_together += wrong_a and wrong_b
                if value_a is not None and value_b is not None:
                    counts.wrong_both += 1
                    counts.same_wrong += answers_match(value_a, value_b, rel_tol=SAME_VALUE)
        return cls(dict(pairs))

    @cached_property
    def pooled(self) -> tuple[float, float]:
        """The table's pooled coincidence and mean phi (the prior every pair is shrunk towards)."""
        wrong = sum(c.wrong_both for c in self.pairs.values())
        same = sum(c.same_wrong for c in self.pairs.values())
        phis = [p for c in self.pairs.values() if (p := _phi(c)) is not None]
        return (same / wrong if wrong else 0.2), (sum(phis) / len(phis) if phis else 0.0)

    def coincidence(self, a: str | None, b: str | None) -> float:
        """The chance that two wrong answers of `a` and `b` to one question are the same value."""
        pooled, _ = self.pooled
        counts = self.pairs.get(self.pair_key(a, b)) if a and b else None
        rate = pooled if counts is None else (
            (counts.same_wrong + PRIOR_QUESTIONS * pooled) / (counts.wrong_both + PRIOR_QUESTIONS))
        low, high = COINCIDENCE_BOUNDS
        return min(max(rate, low), high)

    def correlation(self, a: str | None, b: str | None) -> float:
        """How much `a`'s and `b`'s mistakes go together (phi of their wrongness, shrunk; 1 for one model)."""
        if a is not None and a == b:
            return 1.0
        _, pooled = self.pooled
        counts = self.pairs.get(self.pair_key(a, b)) if a and b else None
        phi = _phi(counts) if counts is not None else None
        if counts is None or phi is None:
            return pooled
        return (phi * counts.both + pooled * PRIOR_QUESTIONS) / (counts.both + PRIOR_QUESTIONS)

    def dependence(self, first: str | None, then: str | None) -> float:
        """How much less `then` agreeing with `first` tells than an independent model's agreement would, in
        log-odds: logit(then's share right) − ln[P(then right | first right) / P(then wrong | first wrong)],
        from the pair's counts (each conditional shrunk towards independence). 0 for an unknown pair."""
        if not first or not then:
            return 0.0
        counts = self.pairs.get(self.pair_key(first, then))
        if counts is None or counts.both == 0:
            return 0.0
        first_is_a = self.pair_key(first, then).startswith(first + "\t")
        wrong_first, wrong_then = ((counts.wrong_a, counts.wrong_b) if first_is_a
                                   else (counts.wrong_b, counts.wrong_a))
        n = counts.both
        right_both = n - wrong_first - wrong_then + counts.wrong_together
        p_then = (n - wrong_then + 1.0) / (n + 2.0)
        right_given_right = (right_both + PRIOR_QUESTIONS * p_then) / (n - wrong_first + PRIOR_QUESTIONS)
        wrong_given_wrong = (counts.wrong_together + PRIOR_QUESTIONS * (1 - p_then)) / (wrong_first + PRIOR_QUESTIONS)
        return math.log(p_then / (1 - p_then)) - math.log(right_given_right / wrong_given_wrong)

    def right_given_wrong(self, first: str | None, then: str | None, then_right: float) -> float:
        """The chance that `then` is right on a question `first` got wrong, from the pair's counts shrunk
        towards independence (`then_right`, its chance of being right on any question) with a few
        pseudo-questions; `then_right` itself for an unknown pair or one model."""
        return self._right_given(first, then, then_right, first_right=False)

    def _right_given(self, first: str | None, then: str | None, then_right: float, *, first_right: bool) -> float:
        if not first or not then or first == then:
            return then_right
        counts = self.pairs.get(self.pair_key(first, then))
        if counts is None:
            return then_right
        first_is_a = self.pair_key(first, then).startswith(first + "\t")
        wrong_first, wrong_then = (counts.wrong_a, counts.wrong_b) if first_is_a else (counts.wrong_b, counts.wrong_a)
        if first_right:  # questions the first got right, and of those the ones `then` got right too
            given = counts.both - wrong_first
            right_then = given - (wrong_then - counts.wrong_together)
        else:
            given, right_then = wrong_first, wrong_first - counts.wrong_together
        return (right_then + PRIOR_QUESTIONS * then_right) / (given + PRIOR_QUESTIONS)

    def most_correlated(self, model: str | None, others: Sequence[str | None]) -> float:
        """The largest correlation of `model`'s mistakes with any of `others`' (0 when there are none)."""
        return max((self.correlation(model, other) for other in others), default=0.0)

    def save(self, directory: Path | str) -> Path:
        folder = Path(directory)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / PEER_ERRORS_FILE
        path.write_text(json.dumps({key: asdict(c) for key, c in sorted(self.pairs.items())}, indent=1),
                        encoding="utf-8")
        return path

    @classmethod
    def load(cls, directory: Path | str) -> PeerErrors:
        path = Path(directory) / PEER_ERRORS_FILE
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            return cls({key: PairCounts(**counts) for key, counts in raw.items()})
        except (OSError, json.JSONDecodeError, TypeError, AttributeError) as error:
            raise ValueError(f"{path}: not a peer-error table ({error})") from None
