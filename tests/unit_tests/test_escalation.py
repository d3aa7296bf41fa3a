"""The fine stage's asking policies (fixed k, adaptive, cascade), the baselines built on them (vote, cascade,
single by model name), and the integration step's routing to the exact tool."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from reso.agents.pool import pool_from_dict
from reso.agents.selection.candidate_score import CandidateScore
from reso.agents.selection.selector import Candidate
from reso.evals.datasets import Problem
from reso.evals.eval_config import EvalConfig, RunOptions
from reso.evals.methods import ORACLE_LABEL, MethodError, parse_method
from reso.evals.runner import run_eval
from reso.graphs.escalation import Adaptive, Asked, AskingConfig, Cascade, FixedK, policy_for
from reso.graphs.settings import ReSoSettings
from reso.reward.base import Score, ScoreItem, Scorer
from tests.engine_fakes import ScriptedAnswerer, scripted_team
from tests.selector_helpers import scored_terms


def _cand(name: str, terms: CandidateScore | None = None, model: str | None = None) -> Candidate:
    """A candidate agent `name` on model `fake:<model>` (default: its own model)."""
    pool = pool_from_dict({"name": "escalation", "agents": [
        {"id": name, "model": {"spec": f"fake:{model or name}", "price_in": 1.0, "price_out": 2.0}, "role": "Algebra",
         "profile": "Solves algebra."}]})
    return Candidate(pool.get(name), 1.0, terms)


def test_fixed_k_asks_k_at_once_and_never_more():
    cands = [_cand(str(i)) for i in range(5)]
    policy = FixedK()
    assert policy.slate_size(2) == 2
    assert policy.first(cands, 2) == [0, 1]
    assert policy.more(cands, [Asked(0, None, 0.0), Asked(1, None, 0.0)]) == []
    assert policy_for(AskingConfig(rule="fixed", k=2, k_max=3)) == FixedK()
    # A confidence threshold means nothing to the fixed rule: the settings refuse it.
    with pytest.raises(ValueError, match="confidence"):
        AskingConfig(rule="fixed", k=2, k_max=3, confidence=0.8)


def test_adaptive_stops_when_confident_and_escalates_to_the_most_reliable_otherwise():
    # Reliability from the coarse stage's terms: reputation (r + 1) / (n + 1) re-smoothed to a prior of
    # one half, so "unseen" (reputation 1.0 after 0 visits) counts as 0.5, not as the most reliable.
    cands = [_cand("cheap", scored_terms(reputation=0.5, visits=9)),
             _cand("cheap2", scored_terms(reputation=0.6, visits=9)),
             _cand("unseen", scored_terms(reputation=1.0, visits=0)),
             _cand("strong", scored_terms(reputation=0.9, visits=9))]
    policy = Adaptive(confidence=0.8, k_max=3, escalate_to="reliable")
    # The coarse stage offers a slate, so escalation can reach a strong agent ranked low for its price.
    assert policy.slate_size(2) == 16 and Adaptive(0.8, 3, slate=2).slate_size(2) == 3
    assert policy.first(cands, 2) == [0, 1]
    assert policy.more(cands, [Asked(0, "4", 0.9), Asked(1, "4", 0.85)]) == []
    assert policy.more(cands, [Asked(0, "4", 0.5), Asked(1, "5", 0.5)]) == [3]
    # A confident score on an answer without a value does not settle the subtask.
    assert policy.more(cands, [Asked(0, None, 0.95), Asked(1, "5", 0.4)]) == [3]
    assert policy.more(cands, [Asked(0, "4", 0.5), Asked(1, "5", 0.5), Asked(3, "6", 0.5)]) == []
    # The engine's model-level reliabilities, when given, decide instead.
    assert policy.more(cands, [Asked(0, "4", 0.5), Asked(1, "5", 0.5)], lambda: [0.5, 0.6, 0.95, 0.9]) == [2]
    # Nobody left is more likely right than the best answer so far: stop rather than pay.
    assert policy.more(cands, [Asked(0, "4", 0.7), Asked(3, "5", 0.75)], lambda: [0.5, 0.6, 0.7, 0.9]) == []
    with pytest.raises(ValueError, match="confidence"):
        Adaptive(confidence=1.5, k_max=3)


def test_ranked_escalation_asks_the_first_in_the_coarse_order_that_could_beat_the_best_answer():
    cands = [_cand(name) for name in ("cheap", "cheap2", "mid", "strong", "dear")]
    ranked, reliable = Adaptive(confidence=0.8, k_max=3), Adaptive(confidence=0.8, k_max=3, escalate_to="reliable")
    assert ranked.escalate_to == "ranked"  # the default
    records = lambda: [0.5, 0.45, 0.7, 0.9, 0.92]  # noqa: E731
    asked = [Asked(0, "4", 0.5)]
    # "cheap2" is next in the cost-aware order but less likely right than the best answer: passed over.
    assert ranked.more(cands, asked, records) == [2] and reliable.more(cands, asked, records) == [4]
    # No answer with a value yet: any candidate could beat it, so the next in order answers.
    assert ranked.more(cands, [Asked(0, None, None)], records) == [1]
    assert ranked.more(cands, [Asked(0, "4", 0.95)], records) == []
    with pytest.raises(ValueError, match="escalate_to"):
        Adaptive(confidence=0.8, k_max=3, escalate_to="cheapest")  # type: ignore[arg-type]


def test_adaptive_first_stage_leaves_out_peers_far_weaker_than_the_first():
    cands = [_cand(name) for name in ("first", "second", "third", "fourth")]
    policy = Adaptive(confidence=0.8, k_max=4)
    assert policy.first(cands, 3, lambda: [0.9, 0.5, 0.85, 0.95]) == [0, 2]
    # A peer stronger than the first, or within the margin, answers with it.
    assert policy.first(cands, 3, lambda: [0.6, 0.95, 0.55, 0.1]) == [0, 1, 2]
    assert Adaptive(0.8, 4, peer_margin=0.5).first(cands, 3, lambda: [0.9, 0.5, 0.85, 0.95]) == [0, 1, 2]
    # A margin of 1 or more is the paper's first stage: all of the first k, records unread.
    assert Adaptive(0.8, 4, peer_margin=1.0).first(cands, 3, lambda: 1 / 0) == [0, 1, 2]
    # Without the engine's records, the coarse stage's terms decide (unseen agents count as 0.5).
    weak_second = [_cand("a", scored_terms(reputation=0.95, visits=99)),
                   _cand("b", scored_terms(reputation=0.2, visits=99))]
    assert policy.first(weak_second, 2) == [0] and policy.first(weak_second, 2, lambda: None) == [0]
    with pytest.raises(ValueError, match="peer_margin"):
        Adaptive(confidence=0.8, k_max=3, peer_margin=-0.1)


def test_adaptive_escalates_at_most_k_max_minus_k_times():
    cands = [_cand(str(i)) for i in range(5)]
    records = lambda: [0.9, 0.3, 0.6, 0.7, 0.8]  # noqa: E731
    policy = policy_for(AskingConfig(rule="confidence", k=2, k_max=4, confidence=0.8, escalate_to="reliable"))
    assert policy == Adaptive(confidence=0.8, k_max=4, escalations=2, escalate_to="reliable")
    # The first stage was trimmed to one answer; escalation still has only k_max - k = 2 places.
    assert policy.more(cands, [Asked(0, "1", 0.2)], records) == [4]
    assert policy.more(cands, [Asked(0, "1", 0.2), Asked(4, "2", 0.2, round=1)], records) == [3]
    assert policy.more(cands, [Asked(0, "1", 0.2), Asked(4, "2", 0.2, round=1), Asked(3, "3", 0.2, round=2)],
                       records) == []
    assert policy_for(AskingConfig(rule="confidence", k=3, k_max=2, confidence=0.8)) == \
        Adaptive(confidence=0.8, k_max=2, escalations=0)


def test_cascade_keeps_agreement_and_otherwise_the_strong_answer():
    cands = [_cand("a"), _cand("b"), _cand("c")]
    policy = Cascade(cheap=2)
    assert policy.first(cands, 2) == [0, 1]
    assert policy.more(cands, [Asked(0, "12", 0.5), Asked(1, "12.0", 0.5)]) == []
    assert policy.more(cands, [Asked(0, "12", 0.5), Asked(1, "13", 0.5)]) == [2]
    assert policy.more(cands, [Asked(0, "12", 0.5), Asked(1, None, None)]) == [2]
    assert policy.keep([Asked(0, "12", 0.5), Asked(1, "13", 0.5), Asked(2, "14", 0.1)]) == 2
    assert policy.keep([Asked(0, "12", 0.5), Asked(1, "13", 0.5), Asked(2, None, None)]) == 0


class _TableScorer(Scorer):
    """Scores an answer by a table keyed by its text (0.5 for anything else)."""

    name = "table"

    def __init__(self, table: dict[str, float]) -> None:
        self.table = table

    def score_detailed(self, items: Sequence[ScoreItem]) -> list[Score]:
        return [Score(self.table.get(item.answer, 0.5)) for item in items]


def _problem() -> Problem:
    plan = [
        {"id": "0", "instruction": "Easy part", "depends_on": []},
        {"id": "1", "instruction": "Hard part", "depends_on": []},
        {"id": "final", "instruction": "Please calculate the value of Answer[0]*Answer[1].",
         "depends_on": ["0", "1"]},
    ]
    return Problem(id="p0", question="q", answer="42", plan=plan,
                   subtask_answers={"0": "6", "1": "7", "final": "42"})


def _models() -> dict[str, ScriptedAnswerer]:
    return {
        "cheap": ScriptedAnswerer(answers={"Easy part": "\\boxed{6}", "Hard part": "\\boxed{5}"}, calls=[]),
        "cheap2": ScriptedAnswerer(answers={"Easy part": "\\boxed{6}", "Hard part": "\\boxed{8}"}, calls=[]),
        "strong": ScriptedAnswerer(answers={"Easy part": "\\boxed{6}", "Hard part": "\\boxed{7}"}, calls=[]),
    }


def _run(tmp_path: Path, method: str, settings: ReSoSettings, scorer: Scorer | None = None,
         choose=None, models: dict[str, ScriptedAnswerer] | None = None, selector=None) -> tuple[dict, dict, dict]:
    """Run `_problem()` once; `selector(pool)`, when given, replaces the scripted team's selector."""
    models = models or _models()
    team = scripted_team(models, choose or (lambda subtask: ["cheap", "cheap2", "strong"]), scorer)
    if selector is not None:
        team = dataclasses.replace(team, selector=selector(team.pool))
    config = EvalConfig(dataset="unit", method=parse_method(method, team.pool), out=tmp_path, settings=settings, command=["reso", "eval"], run=RunOptions(concurrency=1))
    summary = asyncio.run(run_eval(config, [_problem()], team))
    row = json.loads((tmp_path / "results.jsonl").read_text().splitlines()[0])
    return summary, models, row


def _asked(row: dict, step_id: str) -> list[str]:
    step = next(step for step in row["steps"] if step["id"] == step_id)
    return [candidate["agent_id"] for candidate in step["candidates"]]


def test_adaptive_fine_stage_settles_easy_subtasks_cheaply_and_escalates_hard_ones(tmp_path):
    scorer = _TableScorer({"\\boxed{6}": 0.95, "\\boxed{7}": 0.9, "\\boxed{5}": 0.3, "\\boxed{8}": 0.3})
    settings = ReSoSettings().replace({"asking.rule": "confidence", "asking.k": 2, "asking.k_max": 3, "asking.confidence": 0.8})
    summary, models, row = _run(tmp_path, "reso", settings, scorer)
    assert _asked(row, "0") == ["cheap", "cheap2"]
    assert _asked(row, "1") == ["cheap", "cheap2", "strong"]
    assert models["strong"].calls == ["Hard part"]
    assert summary["correct"] == 1


class _RecordSelector:
    """Offers `order`, best first, with each agent's training record as the coarse stage's terms."""

    def __init__(self, pool, order: list[str], records: dict[str, float]) -> None:
        self.pool, self.order, self.records = pool, order, records

    def select(self, subtask, k=None, *, domain=None, exclude=()):
        ids = [i for i in self.order if i not in exclude][: k or None]
        return [Candidate(self.pool.get(i), 1.0, scored_terms(reputation=self.records.get(i, 0.5), visits=99.0))
                for i in ids]

    def update(self, agent_id, reward, cost_usd, tokens, *, domain=None):
        pass


def test_a_strong_first_agent_answers_without_a_far_weaker_peer_and_escalates_once(tmp_path):
    scorer = _TableScorer({"\\boxed{6}": 0.95, "\\boxed{7}": 0.3, "\\boxed{5}": 0.3, "\\boxed{8}": 0.3})
    records = {"strong": 0.9, "cheap": 0.4, "cheap2": 0.2}
    _, models, row = _run(tmp_path, "reso", ReSoSettings().replace({"asking.rule": "confidence", "asking.k": 2, "asking.k_max": 3, "asking.confidence": 0.8}), scorer,
                          selector=lambda pool: _RecordSelector(pool, ["strong", "cheap", "cheap2"], records))
    # "cheap" is far below "strong": the first stage is "strong" alone, an easy part ends there.
    assert _asked(row, "0") == ["strong"]
    # Unsure of the hard part, the fine stage escalates once (k_max - k), to the more reliable of the rest.
    assert _asked(row, "1") == ["strong", "cheap"]
    assert models["cheap2"].calls == []


def test_the_fixed_rule_asks_exactly_k(tmp_path):
    scorer = _TableScorer({"\\boxed{5}": 0.3, "\\boxed{8}": 0.3})
    _, models, row = _run(tmp_path, "reso", ReSoSettings().replace({"asking.rule": "fixed", "asking.k": 2}), scorer)
    assert _asked(row, "1") == ["cheap", "cheap2"] and models["strong"].calls == []


def test_cascade_method_asks_the_strong_model_only_on_disagreement(tmp_path):
    summary, models, row = _run(tmp_path, "cascade:cheap,cheap2>strong", ReSoSettings())
    assert _asked(row, "0") == ["cheap", "cheap2"]
    assert _asked(row, "1") == ["cheap", "cheap2", "strong"]
    kept = {step["id"]: step["value"] for step in row["steps"]}
    assert kept == {"0": "6", "1": "7", "final": "42"}
    assert models["strong"].calls == ["Hard part"] and summary["correct"] == 1


def test_vote_keeps_the_majority_answer(tmp_path):
    hard = {"cheap": "\\boxed{5}", "cheap2": "\\boxed{7}", "strong": "\\boxed{7}"}
    models = {name: ScriptedAnswerer(answers={"Easy part": "\\boxed{6}", "Hard part": text}, calls=[])
              for name, text in hard.items()}
    summary, _, row = _run(tmp_path, "vote:cheap,cheap2,strong", ReSoSettings(), models=models)
    assert _asked(row, "1") == list(hard)
    assert {step["id"]: step["value"] for step in row["steps"]}["1"] == "7"
    assert summary["method_label"] == "vote:cheap,cheap2,strong"


def test_vote_k_needs_a_training_record(tmp_path):
    models = _models()
    team = scripted_team(models, lambda subtask: ["cheap"])
    method = parse_method("vote:2", team.pool)
    with pytest.raises(MethodError, match="best training record"):
        method.adapt(team)


def test_one_model_baselines_keep_by_agreement_and_random_keeps_the_teams_crm():
    team = scripted_team(_models(), lambda subtask: ["cheap"])
    assert team.scorer.name != "consensus"
    for text in ("single:strong", "cot-sc:strong:3"):
        assert parse_method(text, team.pool).adapt(team).scorer.name == "consensus"
    assert parse_method("random", team.pool).adapt(team).scorer is team.scorer
    assert parse_method("reso", team.pool).adapt(team) is team


def test_integration_step_goes_to_the_tool_for_every_method_unless_told_otherwise(tmp_path):
    # The selector offers only LLM agents, which have no answer for the integration step.
    _, _, row = _run(tmp_path / "a", "reso", ReSoSettings().replace({"asking.rule": "fixed", "asking.k": 1}))
    assert _asked(row, "final") == ["calc"]
    _, _, row = _run(tmp_path / "b", "single:strong", ReSoSettings())
    assert _asked(row, "final") == ["calc"]
    summary, _, row = _run(tmp_path / "c", "reso", ReSoSettings().replace({"asking.rule": "fixed", "asking.k": 1, "plan.integration": "select"}))
    assert _asked(row, "final") == ["cheap"] and summary["correct"] == 0


def test_sub_questions_leave_the_tool_out_when_it_does_the_integration(tmp_path):
    _, _, row = _run(tmp_path / "a", "reso", ReSoSettings().replace({"asking.rule": "fixed", "asking.k": 2}),
                     choose=lambda subtask: ["calc", "cheap", "strong"])
    assert _asked(row, "0") == ["cheap", "strong"] and _asked(row, "final") == ["calc"]
    _, _, row = _run(tmp_path / "b", "reso", ReSoSettings().replace({"asking.rule": "fixed", "asking.k": 2, "plan.integration": "select"}),
                     choose=lambda subtask: ["calc", "cheap", "strong"])
    assert _asked(row, "0") == ["calc", "cheap"]


def test_methods_resolve_model_names_and_label_the_oracle():
    team = scripted_team(_models(), lambda subtask: ["cheap"])
    # scripted agents use the model spec `fake:<id>`: the model name is the part after the provider.
    assert parse_method("single:cheap2", team.pool).agents == ("cheap2",)
    assert parse_method("oracle", team.pool).label == ORACLE_LABEL
    with pytest.raises(MethodError, match="no agent or model 'gpt-9'"):
        parse_method("single:gpt-9", team.pool)
    with pytest.raises(MethodError, match="cascade:A,B>C"):
        parse_method("cascade:cheap,cheap2", team.pool)
    with pytest.raises(MethodError, match="K ≥ 2"):
        parse_method("vote:1", team.pool)


def test_adaptive_never_escalates_to_another_role_of_a_model_already_asked():
    cands = [_cand("a1", model="a"), _cand("b1", model="b"), _cand("a2", model="a"), _cand("c1", model="c")]
    policy = Adaptive(confidence=0.9, k_max=3)
    # The second role of model "a" looks most reliable (it is the same model), but would only repeat it.
    assert policy.more(cands, [Asked(0, "1", 0.4), Asked(1, "2", 0.4)], lambda: [0.9, 0.5, 0.9, 0.8]) == [3]


def test_the_oracle_keeps_an_exact_answer_over_one_within_tolerance():
    from reso.evals.methods import ExactFirstRuleScorer

    items = [ScoreItem(subtask="s", answer="\\boxed{66560}", reference="65960"),
             ScoreItem(subtask="s", answer="\\boxed{65960}", reference="65960"),
             ScoreItem(subtask="s", answer="\\boxed{1}", reference="65960")]
    assert ExactFirstRuleScorer().score(items) == [0.99, 1.0, 0.0]
