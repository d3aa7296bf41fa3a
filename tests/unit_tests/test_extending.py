"""The worked examples of docs/architecture.md, "How to extend": a reward model (a scorer kind) and a benchmark
(a named dataset), each defined here, registered through the public registries, and run offline."""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reso.agents.profiles import AgentKind
from reso.agents.selection import policies as selection_policies
from reso.agents.selection.policies import SelectorParts, register_selection_policy
from reso.agents.selection.selector import Candidate
from reso.evals.cli import app
from reso.evals.datasets import Problem, list_datasets, load_dataset, register_dataset
from reso.evals.datasets import registry as dataset_registry
from reso.evals.datasets.problem import EXACT_REL_TOL
from reso.graphs.api import ReSo
from reso.graphs.settings import ReSoSettings
from reso.graphs.team import build_team
from reso.reward import registry as scorer_registry
from reso.reward.base import Score, ScoreItem, Scorer
from reso.reward.registry import build_scorer, register_scorer, scorer_kinds
from tests.engine_fakes import ScriptedAnswerer, scripted_team


@pytest.fixture
def registries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Registrations made by a test last for that test only: each registry is a copy, restored afterwards."""
    monkeypatch.setattr(scorer_registry, "_FACTORIES", dict(scorer_registry._FACTORIES))
    monkeypatch.setattr(dataset_registry, "_REGISTRY", dict(dataset_registry._REGISTRY))
    monkeypatch.setattr(selection_policies, "_POLICIES", dict(selection_policies._POLICIES))


# -- a new selection policy -------------------------------------------------------------------------------------

class CheapestFirst:
    """The k agents of lowest list price for a typical call, whatever the subtask: a policy that learns nothing."""

    def __init__(self, parts: SelectorParts) -> None:
        self.agents = sorted(parts.pool, key=lambda agent: (agent.cost_usd(1000, 500), agent.id))

    def select(self, subtask: str, k: int = 1, *, domain: str | None = None,
               exclude: Collection[str] = ()) -> list[Candidate]:
        allowed = [agent for agent in self.agents if agent.id not in exclude]
        return [Candidate(agent=agent, score=-agent.cost_usd(1000, 500), domain=agent.domain)
                for agent in allowed[:k]]

    def update(self, agent_id: str, reward: float, cost_usd: float, tokens: int, *,
               domain: str | None = None) -> None:
        pass


def test_a_new_selection_policy_is_named_by_the_settings_and_answers_a_run(registries: None,
                                                                           tmp_path: Path) -> None:
    register_selection_policy("cheapest", CheapestFirst, uses_profiles=False)
    settings = ReSoSettings().with_changes({"selection.policy": "cheapest", "asking.rule": "fixed", "asking.k": 2})
    team = build_team(settings)
    assert isinstance(team.selector, CheapestFirst)
    picked = [candidate.agent for candidate in team.selector.select("any subtask", 2)]
    prices = sorted(agent.cost_usd(1000, 500) for agent in team.pool)
    assert [agent.cost_usd(1000, 500) for agent in picked] == prices[:2]

    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["eval", "--dataset", "gsm8k-l-mas-easy-test", "--limit", "2", "--out", str(out),
                                      "--quiet", "--set", "selection.policy=cheapest", "--set", "asking.rule=fixed",
                                      "--set", "asking.k=2"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    asked = {c["agent_id"] for row in rows for step in row["steps"] for c in step["candidates"]}
    tools = {agent.id for agent in team.pool if agent.kind == AgentKind.TOOL}
    # Sub-questions leave the exact tool out, so they go to the two cheapest of the others.
    cheapest = [agent.id for agent in CheapestFirst(SelectorParts(team.pool, team.dadb, settings.selection,
                                                                  team.stats)).agents if agent.id not in tools]
    assert asked - tools == set(cheapest[:2]) and len(rows) == 2


def test_an_unregistered_policy_is_refused_naming_the_registered_ones() -> None:
    with pytest.raises(ValueError, match="unknown selection.policy 'cheapest'; choose one of reputation, random"):
        ReSoSettings().with_changes({"selection.policy": "cheapest"})


# -- a new reward model -----------------------------------------------------------------------------------------

class KeywordScorer(Scorer):
    """1 for an answer that gives its reason with `keyword`, else `miss`: a toy CRM trusting explained answers."""

    name = "keyword"
    blocking = False  # it only reads the items' text, so the engine may call it on the event loop

    def __init__(self, keyword: str = "because", *, miss: float = 0.0) -> None:
        if not 0.0 <= miss <= 1.0:
            raise ValueError(f"miss must be in [0, 1], got {miss}")
        self.keyword, self.miss = keyword.lower(), miss

    def score_detailed(self, items: Sequence[ScoreItem]) -> list[Score]:
        return [Score(1.0) if self.keyword in item.answer.lower() else Score(self.miss, f"no {self.keyword!r}")
                for item in items]


GUESS = "There are \\boxed{4} apples."
REASONED = "Three baskets hold one apple each, so there are \\boxed{3} apples because 3 * 1 = 3."
PLAN = [
    {"id": "a", "instruction": "Step A: how many apples?", "depends_on": []},
    {"id": "final", "instruction": "Please calculate the value of Answer[a]*2.", "depends_on": ["a"]},
]


def test_a_new_scorer_kind_is_built_from_its_spec_and_prefers_the_explained_answer(registries: None) -> None:
    register_scorer("keyword", f"{__name__}:KeywordScorer")  # "module:attribute": imported when first built
    assert "keyword" in scorer_kinds()
    items = [ScoreItem(subtask="How many apples?", answer=text) for text in (GUESS, REASONED)]

    scorer = build_scorer("keyword")
    assert isinstance(scorer, KeywordScorer) and scorer.keyword == "because"
    assert scorer.score_detailed(items) == [Score(0.0, "no 'because'"), Score(1.0)]
    # The text after ":" is the factory's argument; a mapping's other keys are its settings.
    assert build_scorer("keyword:baskets").score(items) == [0.0, 1.0]
    assert build_scorer({"kind": "keyword:so", "miss": 0.25}).score(items) == [0.25, 1.0]


def test_the_new_scorer_chooses_the_answer_in_a_dag_run(registries: None) -> None:
    register_scorer("keyword", KeywordScorer)
    guesser = ScriptedAnswerer(answers={"Step A": GUESS}, calls=[])
    reasoner = ScriptedAnswerer(answers={"Step A": REASONED}, calls=[])

    # The coarse stage ranks the guesser first: only the scorer's verdict can put the reasoner's answer ahead.
    def choose(subtask: str) -> list[str]:
        return ["calc"] if subtask.startswith("Please calculate") else ["guesser", "reasoner"]

    team = scripted_team({"guesser": guesser, "reasoner": reasoner}, choose, scorer=build_scorer("keyword"))

    result = ReSo(team=team).solve("How many apples are there, doubled?", plan=PLAN)

    step_a = result.steps[0]
    assert [(c.agent_id, c.value, c.score) for c in step_a.candidates] == [("guesser", "4", 0.0),
                                                                           ("reasoner", "3", 1.0)]
    assert (step_a.agent, step_a.value) == ("reasoner", "3")
    assert result.answer == "6" and result.steps[-1].agent == "calc"


# -- a new benchmark --------------------------------------------------------------------------------------------

WORD_PROBLEMS = [
    ("apples", "Ann has 17 apples and buys 25 more. How many apples does she have?", "42"),
    ("chairs", "A hall has 6 rows of 7 chairs. How many chairs are there?", "42"),
    ("pages", "A book has 100 pages and Tom has read 58. How many pages are left?", "42"),
]


def tiny_words() -> list[Problem]:
    """Three one-step word problems with integer answers, graded exactly."""
    return [Problem(id=f"tiny-words-{key}", question=question, answer=answer, meta={"source": "tiny-words"},
                    rel_tol=EXACT_REL_TOL) for key, question, answer in WORD_PROBLEMS]


def test_a_new_benchmark_loads_by_name(registries: None, tmp_path: Path) -> None:
    register_dataset("tiny-words", tiny_words)
    assert list_datasets()["tiny-words"] == "Three one-step word problems with integer answers, graded exactly."

    problems = load_dataset("tiny-words")
    assert [(p.id, p.answer, p.rel_tol, p.plan) for p in problems] == [
        ("tiny-words-apples", "42", EXACT_REL_TOL, None), ("tiny-words-chairs", "42", EXACT_REL_TOL, None),
        ("tiny-words-pages", "42", EXACT_REL_TOL, None)]
    assert problems[1].question == "A hall has 6 rows of 7 chairs. How many chairs are there?"
    assert [p.id for p in load_dataset("tiny-words", limit=2)] == ["tiny-words-apples", "tiny-words-chairs"]

    # The same benchmark as a data file needs no code: registered by its path, or passed as one.
    data = tmp_path / "tiny-words.jsonl"
    records = [{"id": key, "question": question, "answer": answer, "rel_tol": EXACT_REL_TOL}
               for key, question, answer in WORD_PROBLEMS]
    data.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    register_dataset("tiny-words-file", data)
    for loaded in (load_dataset("tiny-words-file"), load_dataset(data)):
        assert [(p.id, p.question, p.answer, p.rel_tol) for p in loaded] == [
            (key, question, answer, EXACT_REL_TOL) for key, question, answer in WORD_PROBLEMS]


STRONG, WEAK = "gpt-4-1106-preview", "mistralai/Mixtral-8x7B-Instruct-v0.1"
# Recorded answers (the replay format of reso.agents.adapters.replay_table): the strong model misreads "pages".
RECORDED = {"apples": ("17 + 25 = 42, so she has \\boxed{42} apples.", "She has \\boxed{41} apples."),
            "chairs": ("6 * 7 = 42 chairs: \\boxed{42}.", "There are \\boxed{42} chairs."),
            "pages": ("100 - 58 = 41 pages are left: \\boxed{41}.", "\\boxed{41} pages are left.")}


def test_reso_eval_runs_the_new_benchmark_by_name(registries: None, tmp_path: Path) -> None:
    register_dataset("tiny-words", tiny_words)
    recordings = tmp_path / "tiny_words_recorded.jsonl"
    recordings.write_text("".join(json.dumps({"id": key, "question": question, "answer": answer,
                                              "responses": dict(zip((STRONG, WEAK), RECORDED[key], strict=True))})
                                  + "\n" for key, question, answer in WORD_PROBLEMS), encoding="utf-8")
    out = tmp_path / "run"

    result = CliRunner().invoke(app, ["eval", "--dataset", "tiny-words", "--pool", f"replay:{recordings}",
                                      "--method", f"single:{STRONG}", "--out", str(out), "--quiet"])

    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["dataset"], summary["n"], summary["correct"]) == ("tiny-words", 3, 2)
    assert summary["accuracy"] == pytest.approx(2 / 3)
    rows = {row["id"]: row for row in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    assert {key: (row["answer"], row["correct"]) for key, row in rows.items()} == {
        "tiny-words-apples": ("42", True), "tiny-words-chairs": ("42", True), "tiny-words-pages": ("41", False)}
