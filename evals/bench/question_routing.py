"""`reso bench routing --question-skills`: routing by question, where the models' success depends on the
question and no profile says so.

A simulated world: `topics` kinds of question, each with a vocabulary of its own; a question's text is words
drawn mostly from its topic's vocabulary and partly from a shared one, so nearby texts tend to share a topic
without any text naming it. `models` models on a price ladder (each twice the price of the one below); each
model's chance of being right on a topic is drawn so that the cheap ones are strong on some topics and weak on
others, the dearest good on all, and every model's average over the topics is what its price buys (the
dearer, the better on average). No profile or record per topic is given: the DADB-like pooled record is one
number per model.

A training stream of questions is answered by every model (right with its topic's chance), and
`QuestionSkills` (`reso.agents.selection.question_skills`) is fitted on it with a hashing embedder. A test
stream is then routed at each value of a right answer V (log-spaced over the ladder's prices) by three
routers that each pick one model per question, the one with the most chance right × V − price:

- `pooled`: each model's chance is its record over the whole training stream (what the DADB knows);
- `skills`: its record on the nearest training questions, shrunk towards the pooled one (`QuestionSkills`);
- `topic oracle`: the true chance on the question's topic (a bound no router reaches).

For every router and value: accuracy, cost per question and net value per question (accuracy × V − cost);
and the share of the oracle's net-value advantage over `pooled`, summed over the values, that `skills`
recovers. All draws come from `seed`; the routers share one draw per question and model (right when it falls
below the model's true chance), so their differences come from their choices.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from reso.agents.selection.embeddings import HashEmbedder
from reso.agents.selection.question_skills import QuestionSkills

__all__ = ["QuestionWorld", "run_question_routing"]

_VOCABULARY = 40
_WORDS = 12
_SHARED_SHARE = 0.3
_BASE_PRICE = 0.0001
_VALUES = 9


@dataclass(frozen=True)
class QuestionWorld:
    """The simulated world: each model's chance per topic, and each model's price per call."""

    chance: np.ndarray
    """Models × topics."""
    prices: np.ndarray

    @classmethod
    def draw(cls, models: int, topics: int, rng: np.random.Generator) -> QuestionWorld:
        """Cheap models strong on some topics and weak on others, the dearest good on all; the mean over
        topics rises with the price."""
        if models < 2 or topics < 2:
            raise ValueError(f"need at least two models and two topics, got {models} and {topics}")
        level = np.linspace(0.35, 0.85, models)  # what each model's price buys on average
        spread = np.linspace(0.45, 0.05, models)  # how much its chance varies across topics
        offsets = rng.uniform(-1.0, 1.0, size=(models, topics))
        offsets -= offsets.mean(axis=1, keepdims=True)
        chance = np.clip(level[:, None] + spread[:, None] * offsets, 0.02, 0.98)
        return cls(chance, _BASE_PRICE * 2.0 ** np.arange(models))


def _texts(topics: np.ndarray, rng: np.random.Generator) -> list[str]:
    """A question text per topic: words of its topic's vocabulary, some of the shared one."""
    texts = []
    for topic in topics:
        shared = rng.random(_WORDS) < _SHARED_SHARE
        words = [f"common{w}" if s else f"t{topic}w{w}"
                 for s, w in zip(shared, rng.integers(0, _VOCABULARY, _WORDS), strict=True)]
        texts.append(" ".join(words))
    return texts


def _route(chance: np.ndarray, prices: np.ndarray, value: float) -> np.ndarray:
    """Each question's model: the most chance right × value − price (questions × models in, questions out)."""
    return np.argmax(chance * value - prices[None, :], axis=1)


def run_question_routing(models: int = 5, topics: int = 8, train: int = 2000, test: int = 2000,
                         seed: int = 0) -> dict[str, Any]:
    """The report of the module docstring, as one JSON-ready dict."""
    rng = np.random.default_rng(seed)
    world = QuestionWorld.draw(models, topics, rng)
    names = [f"model-{m}" for m in range(models)]
    embedder = HashEmbedder(256)
    train_topics, test_topics = rng.integers(0, topics, train), rng.integers(0, topics, test)
    right = rng.random((train, models)) < world.chance[:, train_topics].T
    train_texts = _texts(train_topics, rng)
    skills = QuestionSkills.fit([t for t in train_texts for _ in names], names * train,
                                right.astype(int).ravel().tolist(), embedder)
    pooled = right.mean(axis=0)
    test_texts = _texts(test_topics, rng)
    vectors = np.asarray(embedder.embed(test_texts))
    near = np.array([[estimate[name] for name in names] for estimate in
                     (skills.estimate(vector, dict(zip(names, pooled, strict=True))) for vector in vectors)])
    true = world.chance[:, test_topics].T
    outcome = rng.random((test, models))  # one draw per question and model, shared by the routers
    chances = {"pooled": np.tile(pooled, (test, 1)), "skills": near, "topic oracle": true}
    values = np.geomspace(world.prices[0] * 2, world.prices[-1] * 20, _VALUES)
    rows = []
    for value in values:
        row: dict[str, Any] = {"value_usd": float(value)}
        for router, chance in chances.items():
            picked = _route(chance, world.prices, float(value))
            correct = outcome[np.arange(test), picked] < true[np.arange(test), picked]
            cost = world.prices[picked]
            row[router] = {"accuracy": float(correct.mean()), "cost_per_question_usd": float(cost.mean()),
                           "net_value": float(correct.mean() * value - cost.mean())}
        rows.append(row)
    gained = sum(r["skills"]["net_value"] - r["pooled"]["net_value"] for r in rows)
    possible = sum(r["topic oracle"]["net_value"] - r["pooled"]["net_value"] for r in rows)
    return {"models": models, "topics": topics, "train_questions": train, "test_questions": test, "seed": seed,
            "prices_usd": world.prices.tolist(), "rows": rows,
            "skills_share_of_oracle_advantage": gained / possible if possible > 1e-12 else None}
