"""Fair replay of linked sub-questions: a replay model asked one after a wrong (or missing) parent answer has no
recording of the question it computes; it answers, as a live model would, with its recording of the original
sub-question, charged as that call, in the answer, the question's budget and a whole run's usage. Without a
recording of the original it gives no answer, free."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from reso.agents.adapters.failures import FailureKind
from reso.agents.adapters.invoke import call_agent
from reso.agents.adapters.prompting import ContextAnswer, render_subtask_prompt
from reso.agents.adapters.replay import NoRecordingError, load_replay_model
from reso.agents.profiles import Agent, ModelSpec
from reso.agents.selection.selector import Candidate
from reso.evals.datasets import load_dataset
from reso.evals.datasets.release_format import linked_constant, recorded_suffix
from reso.evals.eval_config import EvalConfig, RunOptions
from reso.evals.methods import parse_method
from reso.evals.runner import run_eval
from reso.evals.synth.questions import build_linked_mas
from reso.graphs.budget import Budget
from reso.graphs.fine_stage import _ask
from reso.graphs.settings import ReSoSettings
from reso.graphs.team import build_team

GSM = Path(__file__).resolve().parents[1] / "fixtures" / "replay" / "gsm_mini.jsonl"
APPLES = "Tom has 40 apples and gives away 15. How many apples are left?"  # g-0: deepseek-chat, mystery-model
PAGES = "Ann reads 8 pages a day for 9 days. How many pages does she read?"  # g-1: mystery-model only


def _prompt(question: str, constant: str, answers: dict[str, str | None], adj: str) -> str:
    """`question` with `constant` linked to parents 0 and 1 (their right answers are 7 and 60)."""
    text = question.replace(constant, linked_constant(2, [0, 1], adj), 1) + recorded_suffix(2)
    context = [ContextAnswer(node, f"sub-question {node}", value, failed=value is None)
               for node, value in answers.items()]
    return render_subtask_prompt(text, context)


def _apples(answers: dict[str, str | None]) -> str:
    return _prompt(APPLES, "40", answers, "-27.00")  # 7 + 60 - 27 = 40


def _agent(spec: str) -> Agent:
    return Agent(id="m/arithmetic", model=ModelSpec(spec=spec), role="Arithmetic", profile="Sums.",
                 system_prompt="You are careful.", price_in=3.0, price_out=12.0)


def _recorded_usage(model_name: str, question: str) -> tuple[int, int]:
    """The tokens of `model_name`'s recorded call to `question`, asked plainly."""
    usage = load_replay_model(f"{GSM}#{model_name}").invoke(question).usage_metadata
    assert usage is not None
    return usage["input_tokens"], usage["output_tokens"]


@pytest.mark.parametrize("answers", [{"0": "7", "1": "59"}, {"0": "7"}, {"0": "7", "1": None},
                                     {"0": "7", "1": "sixty"}],
                         ids=["wrong", "missing", "unknown", "not-a-number"])
def test_a_wrong_or_missing_parent_is_answered_with_the_original_recording_at_its_cost(answers) -> None:
    model = load_replay_model(f"{GSM}#deepseek-chat")
    message = model.invoke(_apples(answers))
    original = model.invoke(APPLES)
    assert message.text == original.text and json.loads(message.text)["answer"] == "25"
    assert message.response_metadata["replay_of_original"] is True
    assert original.response_metadata["replay_of_original"] is False
    assert message.response_metadata["replay_id"] == "g-0"
    usage = message.usage_metadata
    assert usage is not None
    assert (usage["input_tokens"], usage["output_tokens"]) == _recorded_usage("deepseek-chat", APPLES)


def test_the_answer_carries_the_original_calls_cost() -> None:
    agent = _agent(f"replay:{GSM}#deepseek-chat")
    model = load_replay_model(f"{GSM}#deepseek-chat")
    answer = asyncio.run(call_agent(agent, model, _apples({"0": "7", "1": "59"})))
    input_tokens, output_tokens = _recorded_usage("deepseek-chat", APPLES)
    assert answer.ok and answer.failure is None and json.loads(answer.text)["answer"] == "25"
    assert (answer.input_tokens, answer.output_tokens) == (input_tokens, output_tokens)
    assert answer.cost_usd == pytest.approx((input_tokens * 3.0 + output_tokens * 12.0) / 1e6)
    assert answer.cost_usd > 0


def test_right_parents_answer_as_before_at_the_same_cost() -> None:
    agent = _agent(f"replay:{GSM}#deepseek-chat")
    model = load_replay_model(f"{GSM}#deepseek-chat")
    right = asyncio.run(call_agent(agent, model, _apples({"0": "7", "1": "60"})))
    wrong = asyncio.run(call_agent(agent, model, _apples({"0": "7", "1": "59"})))
    assert right.ok and json.loads(right.text)["answer"] == "25"
    assert (right.input_tokens, right.output_tokens) == _recorded_usage("deepseek-chat", APPLES)
    assert (wrong.text, wrong.input_tokens, wrong.output_tokens, wrong.cost_usd) == (
        right.text, right.input_tokens, right.output_tokens, pytest.approx(right.cost_usd))


def test_a_model_without_a_recording_of_the_original_gives_no_answer_for_free() -> None:
    prompt = _prompt(PAGES, "9", {"0": "7", "1": "59"}, "-58.00")  # 7 + 60 - 58 = 9
    deepseek = load_replay_model(f"{GSM}#deepseek-chat")
    with pytest.raises(NoRecordingError):
        deepseek.invoke(prompt)
    answer = asyncio.run(call_agent(_agent(f"replay:{GSM}#deepseek-chat"), deepseek, prompt))
    assert answer.failure is FailureKind.NO_RECORDING
    assert (answer.input_tokens, answer.output_tokens, answer.cost_usd) == (0, 0, 0.0)
    # The model that recorded the original answers the same prompt with it.
    mystery = asyncio.run(call_agent(_agent(f"replay:{GSM}#mystery-model"),
                                     load_replay_model(f"{GSM}#mystery-model"), prompt))
    assert mystery.ok and (mystery.input_tokens, mystery.output_tokens) == _recorded_usage("mystery-model", PAGES)


def test_a_computed_question_that_another_model_recorded_is_a_plain_missing_recording(tmp_path: Path) -> None:
    twins = tmp_path / "twins.jsonl"
    twins.write_text("".join(json.dumps(row) + "\n" for row in [
        {"id": "t-40", "question": APPLES, "responses": {"a": "25", "b": "25"}},
        {"id": "t-39", "question": APPLES.replace("40", "39"), "responses": {"b": "24"}},
    ]), encoding="utf-8")
    a = load_replay_model(f"{twins}#a")
    with pytest.raises(NoRecordingError):  # 39 apples: recorded, but not by a
        a.invoke(_apples({"0": "7", "1": "59"}))
    original = a.invoke(_apples({"0": "7", "1": "58"}))  # 38 apples: recorded by nobody, so t-40 answers
    assert original.text == "25" and original.response_metadata["replay_id"] == "t-40"
    assert load_replay_model(f"{twins}#b").invoke(_apples({"0": "7", "1": "59"})).text == "24"


# -- a whole run ---------------------------------------------------------------------------------------------

ROOT = "Ann has one pen and buys one more. How many pens does she have?"  # no constant: the DAG's root
CHILD = "Tom has 40 apples and gives away fifteen. How many apples are left?"  # 40 links to the root's 2


def _linked_world(folder: Path, rows: list[dict], names: tuple[str, ...], tool: bool = True) -> tuple[Path, Path]:
    """One linked composite (root → child → product) of the recordings `rows`, and a pool of the replay models
    `names` (and the exact tool)."""
    recordings = folder / "recordings.jsonl"
    recordings.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    dataset = folder / "linked.json"
    dataset.write_text(json.dumps(build_linked_mas(recordings, 2, 1, 0).items), encoding="utf-8")
    pool = folder / "pool.yaml"
    pool.write_text("name: linked\nmodels:\n" + "".join(
        f'  - spec: "replay:{recordings}#{name}"\n    name: {name}\n    price_in: 1.0\n    price_out: 2.0\n'
        for name in names) + "roles: [Arithmetic Word Problems]\n" + (
        "agents:\n  - id: tool/calculator\n    model: {spec: \"tool:calculator\"}\n    role: Exact arithmetic\n"
        "    profile: Evaluates arithmetic expressions exactly.\n    domain: integration\n" if tool else ""),
        encoding="utf-8")
    return dataset, pool


def _linked_run_files(folder: Path) -> tuple[Path, Path]:
    """`careless` answers the root wrong (3), `careful` right (2); both recorded the child."""
    return _linked_world(folder, [
        {"id": "r-0", "question": ROOT, "answer": "2",
         "responses": {"careless": '{"reasoning": "1 + 1 = 3.", "answer": "3"}',
                       "careful": '{"reasoning": "1 + 1 = 2.", "answer": "2"}'}},
        {"id": "r-1", "question": CHILD, "answer": "25",
         "responses": {"careless": '{"reasoning": "40 - 15 = 25.", "answer": "25"}',
                       "careful": '{"reasoning": "Forty less fifteen is 25.", "answer": "25"}'}},
    ], ("careless", "careful"))


def test_a_run_counts_the_original_call_in_each_row_and_the_summary_and_the_composite_stays_wrong(
        tmp_path: Path) -> None:
    dataset, pool = _linked_run_files(tmp_path)
    problems = load_dataset(str(dataset))
    team = build_team(ReSoSettings(pool=str(pool)))
    config = EvalConfig(dataset="linked", method=parse_method("single:careless", team.pool), out=tmp_path / "out",
                        settings=ReSoSettings(pool=str(pool)), command=["reso", "eval"], run=RunOptions(concurrency=1))
    summary = asyncio.run(run_eval(config, problems, team))
    (row,) = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    root, child, final = row["steps"]
    assert root["value"] == "3" and not row["correct"]
    (answered,) = child["candidates"]
    assert answered["failure"] is None and answered["value"] == "25"  # the original's answer
    recorded = load_replay_model(f"{tmp_path / 'recordings.jsonl'}#careless").invoke(CHILD).usage_metadata
    assert recorded is not None
    assert (answered["input_tokens"], answered["output_tokens"]) == (recorded["input_tokens"],
                                                                      recorded["output_tokens"])
    assert answered["cost_usd"] == pytest.approx((recorded["input_tokens"] + 2 * recorded["output_tokens"]) / 1e6)
    (asked,) = root["candidates"]
    assert final["value"] == "75" and final["candidates"][0]["cost_usd"] == 0.0  # 3 × 25 by the exact tool
    assert row["usage"]["cost_usd"] == pytest.approx(asked["cost_usd"] + answered["cost_usd"])
    assert row["usage"]["input_tokens"] == asked["input_tokens"] + recorded["input_tokens"]
    assert summary["cost_usd"] == pytest.approx(row["usage"]["cost_usd"])


def test_the_question_budget_spends_the_original_call(tmp_path: Path) -> None:
    _, pool = _linked_run_files(tmp_path)
    team = build_team(ReSoSettings(pool=str(pool)))
    agent = next(agent for agent in team.pool if agent.model.name == "careless")
    prompt = render_subtask_prompt(
        CHILD.replace("40", linked_constant(1, [0], "38.00")) + recorded_suffix(1),
        [ContextAnswer("0", ROOT, "3")])
    budget = Budget()
    answer = asyncio.run(_ask(team, Candidate(agent, 1.0), prompt, budget, timeout_s=5.0))
    assert answer.ok and answer.total_tokens > 0
    assert (budget.tokens, budget.usd) == (answer.total_tokens, pytest.approx(answer.cost_usd))
    assert budget.usd > 0


def test_a_missing_recording_in_training_is_no_answer_not_a_wrong_one(tmp_path: Path) -> None:
    """A replay model without a recording of a sub-question gives no answer: training gives it no reward, so
    its record counts only the questions it answered (a gap in the recordings is not a mistake)."""
    dataset, pool = _linked_world(tmp_path, [
        {"id": "r-0", "question": ROOT, "answer": "2",
         "responses": {"careful": '{"answer": "2"}', "gappy": '{"answer": "2"}'}},
        {"id": "r-1", "question": CHILD, "answer": "25", "responses": {"careful": '{"answer": "25"}'}},
    ], ("careful", "gappy"), tool=False)
    settings = ReSoSettings().replace({"asking.rule": "fixed", "asking.k": 2, "selection.embedder": "hash:64", "plan.integration": "select"}, pool=str(pool), mode="train", db=str(tmp_path / "dadb.sqlite"))
    team = build_team(settings)
    try:
        config = EvalConfig(dataset="gaps", method=parse_method("reso", team.pool), out=tmp_path / "out",
                            settings=settings, command=["reso", "eval"], run=RunOptions(concurrency=1))
        asyncio.run(run_eval(config, load_dataset(str(dataset)), team))
        (row,) = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
        by_step = {step["id"]: {c["agent_id"].split("/")[0]: c for c in step["candidates"]} for step in row["steps"]}
        root, child = by_step[row["steps"][0]["id"]], by_step[row["steps"][1]["id"]]
        assert root["gappy"]["reward"] == 1.0 and root["gappy"]["failure"] is None
        assert child["gappy"]["failure"] == "no_recording" and child["gappy"]["reward"] is None
        assert child["careful"]["reward"] == 1.0
        visits = {s.agent_id.split("/")[0]: s.visits for s in team.dadb.all_stats() if s.domain is None}
        assert visits["gappy"] == 1 and visits["careful"] == 2
    finally:
        team.dadb.close()
