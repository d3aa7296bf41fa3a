"""Missing recordings in replayed runs: which composites a replay model could answer in full, and which
composite a run lost because a sub-question had no recording rather than to a wrong answer.

A replay model answers only the questions it has a recording of; a sub-question without one fails at no
cost and loses the composite. So a model's accuracy over all composites counts its missing recordings as
mistakes. Whether a model has a recording of a composite's sub-questions is read from the replay data: each
sub-question as it is asked after right answers to its parents (the linked constants computed from the
reference answers, as `reso.agents.adapters.replay_question` computes them from the prompt) is looked up
in the model's replay files the way the replay agent looks it up. A linked sub-question asked after a
WRONG parent answer is a question nobody recorded, but that is the model's own mistake, so completeness is
decided on the original sub-questions, never on what a run happened to ask.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from reso.agents.adapters.failures import FailureKind, recorded_failure
from reso.agents.adapters.release_text import LINKED_CONSTANT_RE, split_recorded
from reso.evals.datasets import Problem
from reso.evals.reports.compare import Run
from reso.graphs.dag import FINAL_ID
from reso.graphs.run_records import StepStatus

REPLAY_PREFIX = "replay:"


def original_questions(problem: Problem) -> dict[str, str]:
    """Each sub-question's text as asked after right answers to its parents, by step id (the integration
    step, which no model is asked, left out)."""
    from reso.agents.adapters.replay_question import Unresolvable, resolve_linked

    references = problem.step_references()
    texts = {}
    for step in problem.plan or []:
        if step["id"] == FINAL_ID:
            continue
        text, _ = split_recorded(step["instruction"])
        try:
            texts[step["id"]] = resolve_linked(text, references)
        except Unresolvable:  # a reference that is not a number: no replay agent could be asked it either
            texts[step["id"]] = text
    return texts


def linked_steps(problem: Problem) -> set[str]:
    """The sub-questions whose text depends on their parents' answers (a linked constant)."""
    return {step["id"] for step in problem.plan or [] if LINKED_CONSTANT_RE.search(step["instruction"])}


def replay_spec(run: Run) -> str | None:
    """The `replay:<files>#<model>` spec of a single-model run's model, from its candidates (None: the run
    asked no replay model, or more than one)."""
    specs = {str(candidate.get("model", "")) for row in run.rows.values() for step in row.get("steps", [])
             for candidate in step.get("candidates", [])}
    replays = {spec for spec in specs if spec.startswith(REPLAY_PREFIX)}
    return replays.pop() if len(replays) == 1 else None


def missed_recording(row: Mapping[str, Any], linked: Iterable[str] | None = None) -> bool:
    """Whether a result row left a sub-question unanswered for want of a recording of the question as
    originally posed: the step has no answer, a model asked had no recording, and the step is not linked
    (`linked`: the linked step ids; None: every step may be) or every parent was answered right. After a
    wrong parent answer the question asked is one nobody recorded, and the loss is the wrong answer's."""
    steps = {str(step["id"]): step for step in row.get("steps", [])}
    may_link = None if linked is None else set(linked)
    for step_id, step in steps.items():
        if step_id == FINAL_ID or step.get("status") == StepStatus.DONE:
            continue
        if not any(recorded_failure(c) is FailureKind.NO_RECORDING for c in step.get("candidates", [])):
            continue
        if may_link is not None and step_id not in may_link:
            return True
        if all(steps.get(str(parent), {}).get("correct") is True for parent in step.get("depends_on", [])):
            return True
    return False


def unrecorded_items(run: Run, problems: Mapping[str, Problem] | None, ids: Sequence[str]) -> set[str]:
    """The items of `ids` with a sub-question that a single-model run's model has no recording of.

    Read from the model's replay files (named by the run's own candidates) and the items' original
    sub-questions; a model that is not replayed has every question. Where the replay files or the dataset
    cannot be read, what the run shows stands in: the items it lost to a missing recording (`missed_recording`),
    which misses the sub-questions it never reached with right parents.
    """
    from reso.agents.adapters.replay import resolve_replay_path, split_replay_target
    from reso.agents.adapters.replay_table import ReplayError, replay_table

    spec = replay_spec(run)
    if spec is None:
        return set()
    files, model = split_replay_target(spec.removeprefix(REPLAY_PREFIX))
    try:
        tables = [replay_table(resolve_replay_path(name)) for name in files]
    except ReplayError:
        tables = []
    if not tables or problems is None or any(item not in problems for item in ids):
        return {item for item in ids if missed_recording(run.rows[item],
                                                         linked_steps(problems[item]) if problems and item in problems
                                                         else None)}

    def recorded(text: str) -> bool:
        for table in tables:
            recording = table.find(text)
            if recording is not None and model in recording.responses:
                return True
        return False

    return {item for item in ids if not all(map(recorded, original_questions(problems[item]).values()))}


def complete_items(singles: Sequence[Run], problems: Mapping[str, Problem] | None,
                   ids: Sequence[str]) -> list[str]:
    """The items of `ids` (in their order) of which every single-model run's model has a recording of every
    sub-question."""
    missing: set[str] = set()
    for run in singles:
        missing |= unrecorded_items(run, problems, ids)
    return [item for item in ids if item not in missing]
