"""No label reaches selection, the asking policy, the agents or the CRM in a test run (the oracle aside).

The main job's test side (`reso demo`, `reso eval --mode test`) is run here through `run_eval`, on the
vendored MATH level-5 composites and the many-model replay pool, after a short training run and a
calibrated CRM fitted on the training side, as the job does. Spies record everything the coarse stage's
selector, the fine stage's asking policy, the agents (their prompts) and the CRM (every `ScoreItem`) are
shown. Three guards:

- canaries: every reference of the test items (`answer`, `subtask_answers`, so `step_references`) is
  replaced by a number no model writes; none may appear in anything the spies saw, and every decision
  (selected agents, answers, scores, kept answers) must be the same as with the real references;
- the replay files' labels (`correct`, `extracted`, `answer` of every recording) flipped or replaced by a
  canary change no decision either;
- the CRM is trained on answers to training-side questions only: none of a test composite's questions.

The oracle, which uses the labels by definition, is the positive control: its scorer sees the canaries
and its decisions change with them, so the spies and the comparison do detect a label that gets through.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import math
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import reso.agents.adapters.replay_table as replay_table_module
import reso.graphs.fine_stage as fine_stage
import reso.graphs.subtask as subtask
from reso.agents.adapters.replay_table import Recording, ReplayTable
from reso.agents.defaults import zeroeval_pool_path
from reso.agents.pool import load_pool
from reso.agents.selection.selector import Candidate
from reso.evals.datasets import Problem, load_dataset
from reso.evals.eval_config import EvalConfig, RunOptions
from reso.evals.jobs.baselines import cascade_from_record
from reso.evals.jobs.config import RESO_TEST, DemoConfig
from reso.evals.jobs.crm_fit import fit_general_crm, recorded_answers
from reso.evals.jobs.fine_stages import FineStage, stage_changes
from reso.evals.methods import Method, parse_method
from reso.evals.runner import run_eval
from reso.graphs.escalation import Asked, AskingPolicy
from reso.graphs.settings import ReSoSettings
from reso.graphs.team import Team, build_team
from reso.reward.base import Score, ScoreItem, Scorer
from reso.reward.labelled_records import LabelledRecord, load_records, split_by_question
from reso.reward.small_crm import SmallCRM, SmallCRMConfig
from reso.reward.training.calibration_fit import fit_calibration
from reso.reward.training.small_crm_fit import fit_small_crm

TEST_SET, TRAIN_SET = "math-l5-mas-easy-test", "math-l5-mas-easy-train"
TEST_ITEMS, TRAIN_ITEMS = 3, 6
# The many-model world's benchmarks, which share one general CRM.
BENCHMARKS = ("math-l5-mas", "gsm8k-l-mas")
# Digits no model answer holds: each canary is this prefix followed by the item's and the step's index.
CANARY = "73190264"
REPLAY_CANARY = "58204719"
GRADING = ("reference", "correct")


# --- spies -------------------------------------------------------------------------------------------


@dataclass
class Seen:
    """What one run showed the selector, the asking policy, the agents and the CRM, as text."""

    selections: list[str] = field(default_factory=list)
    policy: list[str] = field(default_factory=list)
    prompts: list[str] = field(default_factory=list)
    score_items: list[ScoreItem] = field(default_factory=list)

    def inputs(self) -> list[str]:
        """Every input seen, one text each, in a canonical order (subtasks of a question run concurrently)."""
        return sorted([*self.selections, *self.policy, *self.prompts, *map(repr, self.score_items)])


def _candidates(candidates: Sequence[Candidate]) -> list[tuple[str, float, dict[str, float], str | None]]:
    return [(c.agent.id, c.score, c.selection_record(), c.domain) for c in candidates]


class SpyScorer(Scorer):
    """The run's CRM, recording every item it is shown."""

    def __init__(self, inner: Scorer, seen: Seen) -> None:
        self.inner, self.seen = inner, seen
        self.name, self.blocking = inner.name, inner.blocking

    def score_detailed(self, items: Sequence[ScoreItem]) -> list[Score]:
        self.seen.score_items.extend(items)
        return self.inner.score_detailed(items)


class SpySelector:
    """The run's coarse stage, recording every query (and forwarding everything else)."""

    def __init__(self, inner: Any, seen: Seen) -> None:
        self.inner, self.seen = inner, seen

    def select(self, subtask: str, k: int | None = None, *, domain: str | None = None,
               exclude: Collection[str] = ()) -> list[Candidate]:
        chosen = self.inner.select(subtask, k, domain=domain, exclude=exclude)
        query = ("select", subtask, k, domain, sorted(exclude), _candidates(chosen))
        self.seen.selections.append(repr(query))
        return chosen

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class SpyPolicy:
    """The run's asking policy, recording what each of its calls is shown (and the records it asks for)."""

    def __init__(self, inner: AskingPolicy, seen: Seen) -> None:
        self.inner, self.seen = inner, seen

    def _reliability(self, reliability: Callable[[], Sequence[float] | None] | None
                     ) -> Callable[[], Sequence[float] | None] | None:
        if reliability is None:
            return None

        def spied() -> Sequence[float] | None:
            known = reliability()
            self.seen.policy.append(repr(("reliability", None if known is None else list(known))))
            return known
        return spied

    def slate_size(self, k: int) -> int:
        return self.inner.slate_size(k)

    def first(self, candidates: Sequence[Candidate], k: int, reliability: Any = None) -> list[int]:
        self.seen.policy.append(repr(("first", _candidates(candidates), k)))
        return self.inner.first(candidates, k, self._reliability(reliability))

    def more(self, candidates: Sequence[Candidate], asked: Sequence[Asked],
             reliability: Any = None) -> list[int]:
        self.seen.policy.append(repr(("more", _candidates(candidates), list(asked))))
        return self.inner.more(candidates, asked, self._reliability(reliability))

    def keep(self, asked: Sequence[Asked]) -> int | None:
        self.seen.policy.append(repr(("keep", list(asked))))
        return self.inner.keep(asked)


@dataclass
class Spies:
    """Installs the spies on every run's team; `seen` collects what the current run showed them."""

    seen: Seen = field(default_factory=Seen)

    def fresh(self) -> Seen:
        self.seen = Seen()
        return self.seen


@pytest.fixture(scope="module")
def spies() -> Iterator[Spies]:
    """Spies around whatever selector, scorer and asking policy a method runs with, and the agents' calls."""
    state = Spies()
    adapt, policy_for, call_agent = Method.adapt, subtask.policy_for, fine_stage.call_agent

    def spied_adapt(method: Method, team: Team, *, seed: int = 0) -> Team:
        adapted = adapt(method, team, seed=seed)
        asking = SpyPolicy(adapted.asking, state.seen) if adapted.asking is not None else None
        return dataclasses.replace(adapted, selector=SpySelector(adapted.selector, state.seen),
                                   scorer=SpyScorer(adapted.scorer, state.seen), asking=asking)

    def spied_policy_for(*args: Any, **kwargs: Any) -> SpyPolicy:
        return SpyPolicy(policy_for(*args, **kwargs), state.seen)

    async def spied_call_agent(agent: Any, model: Any, prompt: str, **kwargs: Any) -> Any:
        state.seen.prompts.append(repr(("prompt", agent.id, prompt)))
        return await call_agent(agent, model, prompt, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Method, "adapt", spied_adapt)
        patch.setattr(subtask, "policy_for", spied_policy_for)
        patch.setattr(fine_stage, "call_agent", spied_call_agent)
        yield state


# --- the trained world ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class World:
    """A DADB trained on the training split and a CRM fitted on the training side, as `reso demo` leaves
    them, and the test runs of the job: (method, settings)."""

    methods: tuple[tuple[str, ReSoSettings], ...]
    out: Path


def _small_crm(pool: Any, folder: Path) -> str:
    """The general CRM, fitted on a spread of the recorded answers to training-side questions (a small
    share, to be quick), saved to `folder`; its scorer spec."""
    answers = split_by_question(recorded_answers(pool), "train")[::80]
    fit_small_crm(answers, SmallCRMConfig(folds=0)).save(folder)
    return f"small:{folder}"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    out = tmp_path_factory.mktemp("leakage")
    base = ReSoSettings().replace({"selection.embedder": "hash:64"}, pool=str(zeroeval_pool_path()),
                                  db=str(out / "dadb.sqlite"))
    train = base.replace({"reward.scorer": "consensus", "asking.rule": "fixed", "asking.k": 3,
                          "selection.exploration_c": 1.0}, mode="train", answer_value_usd=math.inf)
    team = build_team(train)
    try:
        config = EvalConfig(dataset=TRAIN_SET, method=parse_method("reso", team.pool), out=out / "train-reso",
                            settings=train, command=["test"], run=RunOptions(concurrency=1))
        asyncio.run(run_eval(config, load_dataset(TRAIN_SET, limit=TRAIN_ITEMS), team))
        general = _small_crm(team.pool, out / "crm-general")
    finally:
        team.dadb.close()
    records = load_records(out / "train-reso" / "crm_records.jsonl")
    fit_calibration(general, records).save(out / "crm-calibrated")
    with_crm = base.replace({"reward.scorer": f"calibrated:{out / 'crm-calibrated'}", **RESO_TEST},
                            mode="test")
    # The peer stages' posteriors share one error table, counted on the training run's labelled records.
    stages = stage_changes(with_crm.reward.scorer, records, out, base.selection.embedder)
    without_crm = base.replace({"reward.scorer": "consensus", **RESO_TEST}, mode="test")
    baseline_team = build_team(without_crm)
    try:
        cascade = cascade_from_record(baseline_team)
    finally:
        baseline_team.dadb.close()
    # As in the job: ReSo in each fine stage (the CRM, the peer posterior over it and over records, the judge,
    # all asking at the default value of a right answer), at a value high enough to ask several, with the earlier
    # confidence threshold and with the paper's fixed k, and random with the fitted CRM; the baselines keep
    # by agreement, the oracle by the labels.
    methods = (("reso", with_crm), *(("reso", with_crm.replace(stages[stage]))
                                     for stage in (FineStage.PEER, FineStage.PEER_ON_RECORDS, FineStage.JUDGE)),
               ("reso", with_crm.replace(stages[FineStage.PEER], answer_value_usd=1.0)),
               ("reso", with_crm.replace({"asking.rule": "confidence", "asking.k_max": 3,
                                          "asking.confidence": 0.8})),
               ("reso", with_crm.replace({"asking.rule": "fixed"})),
               ("random", with_crm), ("single:gpt-4o-mini-2024-07-18", without_crm),
               ("vote:3", without_crm), (cascade, without_crm), ("oracle", without_crm))
    return World(methods, out)


# --- runs ----------------------------------------------------------------------------------------------


def _decisions(row: dict[str, Any]) -> dict[str, Any]:
    """A results line without its grading and timings: what the run decided (agents, answers, scores)."""
    kept = {key: value for key, value in row.items() if key not in (*GRADING, "latency_s")}
    kept["steps"] = [{**{key: value for key, value in step.items() if key not in GRADING},
                      "candidates": [{key: value for key, value in c.items() if key != "latency_s"}
                                     for c in step["candidates"]]}
                     for step in row["steps"]]
    return kept


@dataclass(frozen=True)
class Run:
    """One test run: its decisions per item, and what its selector, policy, agents and CRM were shown."""

    decisions: dict[str, dict[str, Any]]
    seen: Seen


def run_test(world: World, spies: Spies, method: str, settings: ReSoSettings, problems: Sequence[Problem],
             folder: Path) -> Run:
    """`method` in test mode on `problems`, on a team of its own (a shared one would carry the agents'
    health from run to run), one item at a time (each run decides in the same order)."""
    seen = spies.fresh()
    team = build_team(settings)
    try:
        config = EvalConfig(dataset=TEST_SET, method=parse_method(method, team.pool), out=folder,
                            settings=settings, command=["test"], run=RunOptions(concurrency=1))
        asyncio.run(run_eval(config, problems, team))
    finally:
        team.dadb.close()
    rows = [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()]
    return Run({row["id"]: _decisions(row) for row in rows if "id" in row}, seen)


def canary(item: int, step: int) -> str:
    return f"{CANARY}{item}{step}"


def with_canaries(problems: Sequence[Problem]) -> list[Problem]:
    """The problems with every reference replaced by a canary (the final answer's is the `final` step's)."""
    changed = []
    for item, problem in enumerate(problems):
        steps = sorted(problem.step_references())
        answers = {step_id: canary(item, index) for index, step_id in enumerate(steps)}
        changed.append(dataclasses.replace(problem, answer=answers["final"], subtask_answers=answers))
    return changed


def leaked(seen: Seen, marker: str) -> list[str]:
    """The inputs the spies saw that hold `marker`."""
    return [text for text in seen.inputs() if marker in text]


@pytest.fixture(scope="module")
def problems() -> list[Problem]:
    return load_dataset(TEST_SET, limit=TEST_ITEMS)


@pytest.fixture(scope="module")
def real_runs(world: World, spies: Spies, problems: list[Problem]) -> list[Run]:
    return [run_test(world, spies, method, settings, problems, world.out / f"real-{i}")
            for i, (method, settings) in enumerate(world.methods)]


# --- the guards ----------------------------------------------------------------------------------------


def test_the_canaries_are_new_to_the_data(problems: list[Problem], real_runs: list[Run]) -> None:
    """No canary is a real reference, nor anything a run shows its parts with the real references."""
    real = {value for p in problems for value in p.step_references().values()}
    fake = {value for p in with_canaries(problems) for value in p.step_references().values()}
    assert len(fake) == sum(len(p.step_references()) for p in problems) and not real & fake
    assert all(not leaked(run.seen, CANARY) and not leaked(run.seen, REPLAY_CANARY) for run in real_runs)


def test_the_spies_see_every_part_of_every_run(world: World, problems: list[Problem],
                                               real_runs: list[Run]) -> None:
    """Every run asked its selector about each sub-question, consulted its policy, prompted agents and
    scored answers: the spies are where the labels would have to pass."""
    questions = {step["instruction"] for p in problems for step in p.plan or [] if step["id"] != "final"}
    for (method, _), run in zip(world.methods, real_runs, strict=True):
        asked = {text for text in questions if any(repr(text) in s for s in run.seen.selections)}
        assert asked == questions, method
        assert run.seen.policy and run.seen.prompts and run.seen.score_items, method
        assert len(run.decisions) == len(problems), method


def test_no_reference_reaches_selection_the_policy_the_agents_or_the_crm(
        world: World, spies: Spies, problems: list[Problem], real_runs: list[Run]) -> None:
    """With every reference a canary, no run but the oracle's shows one to any part, and every decision is
    the one made with the real references; the oracle's scorer sees them and its decisions change."""
    fake = with_canaries(problems)
    for i, ((method, settings), real) in enumerate(zip(world.methods, real_runs, strict=True)):
        run = run_test(world, spies, method, settings, fake, world.out / f"canary-{i}")
        if method == "oracle":
            # Its scorer sees canaries on every item (a wrong root answer kept leaves its children unasked).
            shown = {item.reference for item in run.seen.score_items}
            assert shown <= {r for p in fake for r in p.step_references().values()}
            assert all(shown & set(p.step_references().values()) for p in fake)
            assert run.decisions != real.decisions, "the oracle's choices should follow the labels"
            continue
        assert leaked(run.seen, CANARY) == [], method
        assert all(item.reference is None for item in run.seen.score_items), method
        assert run.seen.inputs() == real.seen.inputs(), method
        assert run.decisions == real.decisions, method


def _relabelled(table: ReplayTable) -> ReplayTable:
    """The table with every recording's labels flipped and its reference and extracted answers a canary."""
    def relabel(recording: Recording) -> Recording:
        return dataclasses.replace(
            recording, answer=REPLAY_CANARY,
            correct={model: not right for model, right in recording.correct.items()},
            extracted={model: REPLAY_CANARY for model in recording.extracted})
    return ReplayTable(table.path, [relabel(recording) for recording in table.recordings])


def test_the_replay_files_labels_change_no_decision(world: World, spies: Spies, problems: list[Problem],
                                                   real_runs: list[Run]) -> None:
    """With the replay files' labels flipped (and their references a canary), every method, the oracle
    included (its labels are the dataset's), decides as before and shows no part a replay label."""
    load = replay_table_module._load_table
    relabelled = functools.cache(lambda resolved, mtime_ns: _relabelled(load(resolved, mtime_ns)))
    recordings = zeroeval_pool_path().parent / "math_l5_dev.jsonl.gz"
    labels = replay_table_module.replay_correctness(recordings)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(replay_table_module, "_load_table", relabelled)
        flipped = replay_table_module.replay_correctness(recordings)
        # What every team built in here reads.
        assert labels and flipped == {key: not right for key, right in labels.items()}
        runs = [run_test(world, spies, method, settings, problems, world.out / f"relabelled-{i}")
                for i, (method, settings) in enumerate(world.methods)]
    for (method, _), run, real in zip(world.methods, runs, real_runs, strict=True):
        assert leaked(run.seen, REPLAY_CANARY) == [], method
        assert run.seen.inputs() == real.seen.inputs(), method
        assert run.decisions == real.decisions, method


def _crm_training_answers(config: DemoConfig) -> list[LabelledRecord]:
    """The recorded answers `reso demo` trains its general CRM on (the fit itself is skipped)."""
    given: list[LabelledRecord] = []

    def capture(answers: Sequence[LabelledRecord], tune: bool) -> SmallCRM:
        given.extend(answers)
        raise StopIteration

    import reso.reward.training.small_crm_fit as small_crm_fit

    pool = load_pool(zeroeval_pool_path())
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(small_crm_fit, "fit_small_crm", capture)
        with pytest.raises(StopIteration):
            fit_general_crm(config, pool, config.out / "crm-general", lambda line: None)
    return given


@pytest.mark.parametrize("swap_split", [False, True])
def test_the_crm_learns_no_answer_to_a_test_question(tmp_path: Path, swap_split: bool) -> None:
    """The labelled answers the general CRM is trained on answer training-side questions only: none of the
    questions a test composite is built from (either way round, `--swap-split` too)."""
    answers = _crm_training_answers(DemoConfig(out=tmp_path, swap_split=swap_split))
    side = "train" if swap_split else "test"
    tested = {qid for stem in BENCHMARKS for p in load_dataset(f"{stem}-easy-{side}")
              for qid in p.meta["step_question_ids"].values()}
    trained = {answer.question_id for answer in answers}
    assert len(trained) > 200 and len(tested) > 100
    assert trained & tested == set()


def test_a_test_run_other_than_the_oracle_may_not_hand_the_crm_the_references(
        world: World, problems: list[Problem], tmp_path: Path) -> None:
    from reso.evals.methods import MethodError

    _, reso = world.methods[0]
    settings = reso.replace({"reward.sees_reference": True})
    team = build_team(settings)
    try:
        config = EvalConfig(dataset="math-l5-mas-easy-test", method=parse_method("reso", team.pool),
                            out=tmp_path / "run", settings=settings)
        with pytest.raises(MethodError, match="only the oracle baseline"):
            asyncio.run(run_eval(config, problems, team))
    finally:
        team.dadb.close()
    assert not (tmp_path / "run").exists()
