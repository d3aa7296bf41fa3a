"""Fixed voting teams of a pool's agents, chosen on one run and scored on another: how far agreement alone
takes a pool.

Both runs are oracle runs (`reso eval --method oracle`): every agent of the pool answered every sub-question,
each answer graded against the reference and charged its recorded cost, so any team's vote can be replayed
from them without asking a model again. A team keeps, per sub-question, the answer with the most weight
among its members' answers (two answers are one when their values are the same to a millionth, as the
composites grade); each member's vote weighs its share of right sub-questions on the choosing run, as
`vote:K` weighs reputations; a tie goes to the answer of the member listed first in the pool. A composite
counts as right when every sub-question's kept answer is: the integration step is exact arithmetic over
them, and the rare composite whose final value comes out right from wrong parts (a product with a zero
factor) is not counted.

`search_teams` scores every team of up to `max_size` agents whose cost on the choosing run is at most
`cost_cap` times that of the run's best single agent, and keeps the one with the most composites right
(then the cheaper). Chosen on the choosing run, it is a method one could deploy; chosen on the test run's
own labels (`hindsight`, its cost capped against the same single agent), it is a bound on what any fixed vote
of the pool could have reached there, not a method.

Written here because no evaluation library replays recorded per-model answers as weighted votes; the
enumeration is vectorised with numpy, since a pool of 22 agents has about 35,000 teams of up to five.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from reso.evals.reports.compare import CompareError, Comparison, Run, compare_runs, load_run
from reso.reward.answers import answers_match
from reso.reward.peer_errors import SAME_VALUE


@dataclass(frozen=True)
class RecordedAnswers:
    """Every agent's answer to every sub-question of one oracle run, as arrays over sub-questions (S) and
    agents (A)."""

    run: Run
    agents: tuple[str, ...]
    items: tuple[str, ...]
    item_of: np.ndarray
    """(S,) the index in `items` of each sub-question's composite."""
    answer: np.ndarray
    """(S, A) the class of each agent's answer within its sub-question (agreeing answers share one), -1 for none."""
    right: np.ndarray
    """(S, A) whether each agent's answer was graded right."""
    cost: np.ndarray
    """(S, A) each answer's cost in USD."""

    @cached_property
    def class_right(self) -> np.ndarray:
        """(S, A) whether answer class c of sub-question s is right (classes number at most A)."""
        table = np.zeros(self.answer.shape, dtype=bool)
        rows, cols = np.nonzero(self.right & (self.answer >= 0))
        table[rows, self.answer[rows, cols]] = True
        return table

    def record(self) -> np.ndarray:
        """(A,) each agent's share of right sub-questions."""
        return self.right.mean(axis=0) if len(self.right) else np.zeros(len(self.agents))

    def restricted(self, agents: Sequence[str]) -> RecordedAnswers:
        """The same answers, of `agents` only, in that order."""
        columns = [self.agents.index(agent) for agent in agents]
        return RecordedAnswers(self.run, tuple(agents), self.items, self.item_of, self.answer[:, columns],
                               self.right[:, columns], self.cost[:, columns])


def _classes(values: Sequence[str | None]) -> list[int]:
    """Number the distinct values (the same to a millionth) in order of first appearance; -1 for none."""
    firsts: list[str] = []
    out = []
    for value in values:
        if value is None:
            out.append(-1)
            continue
        home = next((i for i, first in enumerate(firsts) if answers_match(first, value, rel_tol=SAME_VALUE)), None)
        if home is None:
            firsts.append(value)
            home = len(firsts) - 1
        out.append(home)
    return out


def _sub_questions(row: dict[str, Any]) -> Iterator[tuple[str | None, dict[str, dict[str, Any]]]]:
    """Each sub-question step of a results row: its reference and {agent id: candidate}, tool steps left out."""
    for step in row.get("steps") or []:
        answers = {c["agent_id"]: c for c in step.get("candidates") or []
                   if not str(c.get("model", "")).startswith("tool:")}
        if answers:
            yield step.get("reference"), answers


def _graded(value: str | None, reference: str | None) -> bool:
    """Right as the composites grade a sub-question: the reference's value to a millionth (the oracle's
    own scorer allows the checker's 1 %, which would count 228 for 226)."""
    return value is not None and reference is not None and answers_match(value, reference, rel_tol=SAME_VALUE)


def read_recorded_answers(folder: Path) -> RecordedAnswers:
    """An oracle run's answers: the agents that answer its first sub-question, on every sub-question.

    Raises:
        CompareError: The folder is not a finished `reso eval` run, not an oracle run, or some sub-question
            lacks an agent's answer (named with the item and its results line's position).
    """
    run = load_run(folder)
    if run.summary.get("method") != "oracle":
        raise CompareError(f"{folder}: a run of {run.summary.get('method')!r}; teams are replayed from an "
                           "oracle run (`reso eval --method oracle`), where every agent answers")
    items = sorted(run.rows)
    agents: tuple[str, ...] = ()
    item_of, answer, right, cost = [], [], [], []
    for index, item in enumerate(items):
        for reference, answers in _sub_questions(run.rows[item]):
            agents = agents or tuple(answers)
            missing = [agent for agent in agents if agent not in answers]
            if missing:
                raise CompareError(f"{folder}/results.jsonl: item {item}: no answer of {', '.join(missing)} "
                                   "to one of its sub-questions")
            ordered = [answers[agent] for agent in agents]
            item_of.append(index)
            answer.append(_classes([c.get("value") for c in ordered]))
            right.append([_graded(c.get("value"), reference) for c in ordered])
            cost.append([float(c.get("cost_usd") or 0.0) for c in ordered])
    if not agents:
        raise CompareError(f"{folder}: no sub-question answered by a model")
    shape = (len(item_of), len(agents))
    return RecordedAnswers(run, agents, tuple(items), np.array(item_of, dtype=int),
                           np.array(answer, dtype=int).reshape(shape), np.array(right, dtype=bool).reshape(shape),
                           np.array(cost, dtype=float).reshape(shape))


def team_votes(recorded: RecordedAnswers, team: Sequence[int], weights: np.ndarray) -> np.ndarray:
    """(items,) whether the team's weighted vote keeps a right answer on every sub-question of each item; a
    tie (to nine decimals) goes to the answer of the member listed first in the pool."""
    steps, count = recorded.answer.shape
    tally = np.zeros((steps, count))
    first = np.full((steps, count), count)
    rows = np.arange(steps)
    # Last member first, so that `first` ends holding the earliest member that gave each answer.
    for member in sorted(team, reverse=True):
        given = recorded.answer[:, member] >= 0
        where = (rows[given], recorded.answer[given, member])
        np.add.at(tally, where, weights[member])
        first[where] = member
    tally = np.round(tally, 9)
    leading = (tally == tally.max(axis=1, keepdims=True)) & (first < count)
    kept = np.where(leading, first, count + 1).argmin(axis=1)
    answered = (recorded.answer[:, list(team)] >= 0).any(axis=1)
    kept_right = recorded.class_right[rows, kept] & answered
    wrong = np.bincount(recorded.item_of, weights=~kept_right, minlength=len(recorded.items))
    return wrong == 0


def any_member_right(recorded: RecordedAnswers, team: Sequence[int]) -> np.ndarray:
    """(items,) whether some member is right on every sub-question of each item: what a perfect judge of the
    team's answers would keep."""
    some = recorded.right[:, list(team)].any(axis=1)
    wrong = np.bincount(recorded.item_of, weights=~some, minlength=len(recorded.items))
    return wrong == 0


def team_cost(recorded: RecordedAnswers, team: Sequence[int]) -> np.ndarray:
    """(items,) the team's cost per item in USD: every member answers every sub-question."""
    return np.bincount(recorded.item_of, weights=recorded.cost[:, list(team)].sum(axis=1),
                       minlength=len(recorded.items))


@dataclass(frozen=True)
class Team:
    """A team found by `search_teams`: its agents, and on the run it was chosen on its composites right and
    its cost against the single agent that measures the cap."""

    agents: tuple[str, ...]
    members: tuple[int, ...]
    correct: int
    cost_ratio: float


def search_teams(recorded: RecordedAnswers, weights: np.ndarray, max_size: int, cost_cap: float,
                 reference: int | None = None) -> tuple[Team, Team]:
    """The best single agent and the best team of up to `max_size` agents costing at most `cost_cap` times
    the `reference` agent (default: that best single agent), by composites right on `recorded` (then
    cheaper, then earlier in the pool)."""
    count = len(recorded.agents)
    costs = recorded.cost.sum(axis=0)
    singles = [(int(team_votes(recorded, [a], weights).sum()), -costs[a], -a) for a in range(count)]
    best = max(range(count), key=lambda a: singles[a]) if reference is None else reference
    budget = cost_cap * costs[best]
    chosen: tuple[int, float, tuple[int, ...]] = (-1, 0.0, ())
    for size in range(1, max_size + 1):
        for team in itertools.combinations(range(count), size):
            spent = float(costs[list(team)].sum())
            if spent > budget * (1 + 1e-9):
                continue
            correct = int(team_votes(recorded, team, weights).sum())
            if (correct, -spent) > (chosen[0], -chosen[1]):
                chosen = (correct, spent, team)

    def found(correct: int, spent: float, team: tuple[int, ...]) -> Team:
        ratio = spent / float(costs[best]) if costs[best] > 0 else 0.0
        return Team(tuple(recorded.agents[a] for a in team), team, correct, float(ratio))

    return found(singles[best][0], float(costs[best]), (best,)), found(*chosen)


@dataclass(frozen=True)
class TeamStudy:
    """The choosing run's best single agent and best team, their figures on the test run (as a comparison
    against that single agent, with intervals), and the best team in hindsight on the test run."""

    choose_run: str
    test_run: str
    max_size: int
    cost_cap: float
    single: Team
    team: Team
    hindsight: Team
    comparison: Comparison
    any_right: dict[str, float]
    """Per row label: the share of test composites where some member is right on every sub-question."""

    def to_json(self) -> dict[str, Any]:
        def side(team: Team) -> dict[str, Any]:
            return {"agents": list(team.agents), "correct": team.correct, "cost_ratio": team.cost_ratio}

        return {"choose_run": self.choose_run, "test_run": self.test_run, "max_size": self.max_size,
                "cost_cap": self.cost_cap, "chosen_single": side(self.single), "chosen_team": side(self.team),
                "hindsight_team_on_test": side(self.hindsight), "any_member_right": self.any_right,
                "comparison": self.comparison.to_json()}


# Beyond this many teams a search runs for many minutes (it scores a few thousand teams a second, more where
# the cost cap rules teams out before their vote is counted).
MAX_TEAMS = 5_000_000

SINGLE = "best single agent (chosen)"
REFERENCE = "reference agent"
TEAM = "vote of the chosen team"
HINDSIGHT = "vote of the best team in hindsight (uses the test labels)"
EVERY = "oracle: some agent right (uses the test labels)"


def _virtual_run(test: RecordedAnswers, label: str, method: str, correct: np.ndarray, cost: np.ndarray) -> Run:
    rows = {item: {"id": item, "correct": bool(ok), "usage": {"cost_usd": float(spent)}}
            for item, ok, spent in zip(test.items, correct, cost, strict=True)}
    summary = {**test.run.summary, "method": method, "method_label": label, "run_label": label}
    return Run(folder=test.run.folder, summary=summary, rows=rows)


def _agent_index(agents: Sequence[str], name: str) -> int:
    """The index of agent `name`: an agent id, or a model's name when one agent of the runs has it."""
    if name in agents:
        return agents.index(name)
    matches = [i for i, agent in enumerate(agents) if agent.split("/", 1)[0] == name]
    if len(matches) != 1:
        raise ValueError(f"--reference {name!r}: {'no' if not matches else 'more than one'} agent of both runs "
                         f"is that; they are {', '.join(agents)}")
    return matches[0]


def study_teams(choose_folder: Path, test_folder: Path, *, max_size: int = 5, cost_cap: float = 3.0,
                reference: str | None = None) -> TeamStudy:
    """Choose the best single agent and team on `choose_folder`'s oracle run, score them on
    `test_folder`'s, and find the best team in hindsight there (module docstring). With `reference` (an
    agent id or a model name) that agent replaces the best single one: the cost cap is in multiples of its
    cost, and every row is compared with it.

    Raises:
        CompareError: A folder is not an oracle run, or the runs share no agent.
        ValueError: max_size below 1, cost_cap not positive, or no such reference agent.
    """
    if max_size < 1:
        raise ValueError(f"max_size must be >= 1, got {max_size}")
    if not cost_cap > 0:
        raise ValueError(f"cost_cap must be > 0, got {cost_cap}")
    choose, test = read_recorded_answers(choose_folder), read_recorded_answers(test_folder)
    agents = [agent for agent in choose.agents if agent in test.agents]
    if not agents:
        raise CompareError(f"{choose_folder} and {test_folder}: no agent answered in both runs")
    teams = sum(math.comb(len(agents), size) for size in range(1, max_size + 1))
    if teams > MAX_TEAMS:
        raise ValueError(f"--max-size {max_size}: {teams:,} teams of {len(agents)} agents to score, more than "
                         f"{MAX_TEAMS:,}; lower --max-size")
    choose, test = choose.restricted(agents), test.restricted(agents)
    weights, hindsight_weights = choose.record(), test.record()
    anchor = None if reference is None else _agent_index(agents, reference)
    single, team = search_teams(choose, weights, max_size, cost_cap, reference=anchor)
    # In hindsight too the cap is in multiples of the chosen single agent's cost, so every row shares one scale.
    _, hindsight = search_teams(test, hindsight_weights, max_size, cost_cap, reference=single.members[0])
    everyone = tuple(range(len(agents)))
    rows = [
        (SINGLE if anchor is None else REFERENCE, f"single:{single.agents[0]}",
         team_votes(test, single.members, weights), single.members),
        (TEAM, "vote:" + ",".join(team.agents), team_votes(test, team.members, weights), team.members),
        (HINDSIGHT, "vote:" + ",".join(hindsight.agents), team_votes(test, hindsight.members, hindsight_weights),
         hindsight.members),
        (EVERY, "oracle", any_member_right(test, everyone), everyone),
    ]
    runs = [_virtual_run(test, label, method, correct, team_cost(test, members))
            for label, method, correct, members in rows]
    comparison = compare_runs(runs, 0)
    any_right = {label: float(any_member_right(test, members).mean()) for label, _, _, members in rows[:3]}
    return TeamStudy(str(choose_folder), str(test_folder), max_size, cost_cap, single, team, hindsight,
                     comparison, any_right)
