"""The DAG engine end to end with scripted agents: answers flow along edges, branches overlap,
failures stay local, budgets stop calls, training updates reach the selector, and the graph's shape."""

from __future__ import annotations

import asyncio

import pytest

from reso.graphs.api import ReSo
from reso.graphs.compile import compile_dag
from reso.graphs.dag import TaskDAG
from tests.engine_fakes import ScriptedAnswerer, scripted_team

DIAMOND = [
    {"id": "a", "instruction": "Step A: how many apples?", "depends_on": []},
    {"id": "b", "instruction": "Step B: how many bananas?", "depends_on": []},
    {"id": "c", "instruction": "Step C: double Answer[a].", "depends_on": ["a"]},
    {"id": "final", "instruction": "Please calculate the value of Answer[b]*Answer[c].",
     "depends_on": ["b", "c"]},
]


def _choose(subtask: str) -> list[str]:
    return ["calc"] if subtask.startswith("Please calculate") else ["solver"]


def _team(delays=None, failures=None, answers=None):
    solver = ScriptedAnswerer(
        answers=answers or {"Step A": "A is \\boxed{3}", "Step B": "B is \\boxed{5}", "Step C": "\\boxed{6}"},
        delays=delays or {}, failures=failures or {}, calls=[],
    )
    return scripted_team({"solver": solver}, _choose), solver


def test_answers_flow_along_edges_to_the_exact_final_step():
    team, solver = _team()
    result = ReSo(team=team).solve("diamond", plan=DIAMOND)
    assert result.answer == "30"
    assert result.status == "done"
    assert [step.id for step in result.steps] == ["a", "b", "c", "final"]
    final = result.steps[-1]
    assert final.agent == "calc" and final.value == "30"
    # Three scripted calls of 10 in + 5 out tokens at $1 / $2 per million; the calculator is free.
    assert result.usage.calls == 4
    assert result.usage.input_tokens == 30 and result.usage.output_tokens == 15
    assert result.usage.cost_usd == pytest.approx(3 * (10 * 1 + 5 * 2) / 1e6)


def test_child_sees_its_parents_answer_in_its_prompt():
    team, solver = _team()
    seen: list[str] = []
    original = solver._key

    def spy(messages):
        seen.append(str(messages[-1].content))
        return original(messages)

    object.__setattr__(solver, "_key", spy)
    ReSo(team=team).solve("diamond", plan=DIAMOND)
    prompt_c = next(p for p in seen if p.rstrip().endswith("Step C: double Answer[a]."))
    assert "Answer[a] = 3" in prompt_c
    assert "Answer[b]" not in prompt_c  # context policy "parents": b is not c's parent


def test_independent_branches_overlap_and_eager_successor_starts_before_slow_sibling_ends():
    team, _ = _team(delays={"Step A": 0.05, "Step B": 0.6, "Step C": 0.05})
    result = ReSo({"plan.schedule": "eager"}, team=team).solve("diamond", plan=DIAMOND)
    steps = {step.id: step for step in result.steps}
    assert steps["a"].started_s < steps["b"].finished_s and steps["b"].started_s < steps["a"].finished_s
    # c depends only on a: in eager mode it starts while b (slow, unrelated) is still running.
    assert steps["c"].started_s < steps["b"].finished_s


def test_waves_mode_waits_for_the_superstep():
    team, _ = _team(delays={"Step A": 0.05, "Step B": 0.6, "Step C": 0.05})
    result = ReSo({"plan.schedule": "waves"}, team=team).solve("diamond", plan=DIAMOND)
    steps = {step.id: step for step in result.steps}
    assert steps["c"].started_s >= steps["b"].finished_s


def test_a_failing_branch_does_not_sink_the_others():
    team, _ = _team(failures={"Step B": "HTTP 500 from provider"})
    result = ReSo(team=team).solve("diamond", plan=DIAMOND)
    steps = {step.id: step for step in result.steps}
    assert steps["b"].status == "failed"
    assert "HTTP 500" in steps["b"].candidates[0].error
    assert steps["a"].status == "done" and steps["c"].status == "done" and steps["c"].value == "6"
    # The final step still ran, knew b was unknown, and the calculator declined it.
    assert steps["final"].status == "failed"
    assert result.answer is None and result.status == "failed"


def test_token_budget_stops_further_calls():
    team, solver = _team()
    result = ReSo({"limits.max_tokens": 20}, team=team).solve("diamond", plan=DIAMOND)
    assert result.status == "budget_exceeded"
    refused = [c for step in result.steps for c in step.candidates if c.error and "BudgetExceeded" in c.error]
    assert refused, "later calls must be refused before they are made"
    assert len(solver.calls) < 3
    assert any("budget exceeded" in note for note in result.notes)


def test_training_mode_sends_rule_rewards_to_the_selector():
    team, _ = _team(answers={"Step A": "\\boxed{3}", "Step B": "\\boxed{4}", "Step C": "\\boxed{6}"})
    references = {"a": "3", "b": "5", "c": "6", "final": "30"}
    ReSo(team=team, mode="train").solve("diamond", plan=DIAMOND, references=references)
    rewards = sorted(team.selector.updates)
    # Step B is answered wrong, so the final step's reference no longer applies: its candidate is not
    # blamed (nor credited) for B's mistake.
    assert rewards == [("solver", 0.0), ("solver", 1.0), ("solver", 1.0)]


def test_training_learns_the_integration_step_when_its_parents_are_right():
    team, _ = _team(answers={"Step A": "\\boxed{3}", "Step B": "\\boxed{5}", "Step C": "\\boxed{6}"})
    references = {"a": "3", "b": "5", "c": "6", "final": "30"}
    ReSo(team=team, mode="train").solve("diamond", plan=DIAMOND, references=references)
    assert ("calc", 1.0) in team.selector.updates and len(team.selector.updates) == 4


def test_test_mode_sends_no_updates():
    team, _ = _team()
    ReSo(team=team, mode="test").solve("diamond", plan=DIAMOND)
    assert team.selector.updates == []


def test_stream_yields_plan_progress_and_result():
    team, _ = _team()

    async def collect():
        return [event async for event in ReSo(team=team).astream("diamond", plan=DIAMOND)]

    events = asyncio.run(collect())
    kinds = [event["event"] for event in events]
    assert kinds[0] == "plan" and kinds[-1] == "result"
    assert kinds.count("subtask_done") == 4
    assert events[-1]["result"].answer == "30"


def test_compiled_dag_mermaid_snapshot():
    mermaid = compile_dag(TaskDAG.from_steps(DIAMOND)).get_graph().draw_mermaid()
    edges = sorted(line.strip() for line in mermaid.splitlines() if "-->" in line)
    assert edges == sorted([
        "__start__ --> step_a;",
        "__start__ --> step_b;",
        "step_a --> step_c;",
        "step_b --> step_final;",
        "step_c --> step_final;",
        "step_final --> __end__;",
    ])


@pytest.mark.parametrize("schedule", ["eager", "waves"])
@pytest.mark.parametrize("policy, c_sees, final_sees", [
    ("parents", {"a"}, {"b", "c"}),
    ("ancestors", {"a"}, {"a", "b", "c"}),
    ("all", {"a", "b"}, {"a", "b", "c"}),
])
def test_context_policy_decides_which_earlier_answers_a_subtask_sees(schedule, policy, c_sees, final_sees):
    import re

    team, solver = _team()
    prompts: dict[str, str] = {}
    original = solver._key

    def spy(messages):
        key = original(messages)
        prompts[key] = str(messages[-1].content)
        return key

    object.__setattr__(solver, "_key", spy)
    calc_prompts: list[str] = []
    calc = team.models["calc"]
    original_calc = type(calc)._generate

    def calc_spy(self, messages, *args, **kwargs):
        calc_prompts.append(str(messages[-1].content))
        return original_calc(self, messages, *args, **kwargs)

    import unittest.mock

    with unittest.mock.patch.object(type(calc), "_generate", calc_spy):
        result = ReSo({"plan.context": policy, "plan.schedule": schedule}, team=team).solve("diamond", plan=DIAMOND)
    assert result.answer == "30"

    def seen(prompt: str) -> set[str]:
        return set(re.findall(r"^Answer\[(\w+)\] = ", prompt, flags=re.MULTILINE))

    assert seen(prompts["Step C"]) == c_sees
    assert seen(calc_prompts[0]) == final_sees


def test_compiled_graphs_are_shared_by_dags_of_the_same_shape():
    renamed = [{**step, "instruction": step["instruction"].upper()} for step in DIAMOND]
    chain = [{"id": "a", "instruction": "A", "depends_on": []},
             {"id": "final", "instruction": "B", "depends_on": ["a"]}]
    first = compile_dag(TaskDAG.from_steps(DIAMOND))
    assert compile_dag(TaskDAG.from_steps(renamed)) is first
    assert compile_dag(TaskDAG.from_steps(chain)) is not first
