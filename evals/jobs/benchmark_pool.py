"""A benchmark's own roster: the world's pool less the replay models that record too few of the questions
its training composites ask.

A pool may hold models recorded on one benchmark only (the open world's Qwen2.5 models answer MATH, not
GSM8K). Such a model cannot answer the other benchmark's questions: as a single-model baseline it would be a
0 % row, in a vote a voter that never votes, in ReSo an agent training has to learn to avoid. So each
benchmark's pool leaves out every replay model that records fewer than `MIN_RECORDED` of the distinct
questions (by the recordings' question ids) of the benchmark's training composites; ReSo, every single
model, the votes, the cascade, random and the oracle then all see the same roster. Models that are not
replays (live endpoints, tools) always stay: nothing says in advance what they can answer.

When a model is left out, the benchmark's pool is written into its output folder (`pool.yaml`, paths made
absolute, a comment naming who was left out and why), so `reso eval --pool` reruns any row on the roster the
benchmark ran on; when none is, the world's pool file is used as it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from reso.agents.adapters.replay import resolve_replay_path, split_replay_target
from reso.agents.adapters.replay_table import replay_table
from reso.agents.defaults import default_pool_path
from reso.agents.pool import Pool, load_pool, read_pool_document
from reso.agents.pool_source import absolute_document
from reso.agents.profiles import AgentKind, Provider
from reso.evals.datasets.problem import DatasetError, Problem
from reso.evals.jobs.config import MIN_RECORDED

__all__ = ["BenchmarkRoster", "asked_questions", "benchmark_roster", "recorded_shares"]

"""The share of a benchmark's training questions a replay model must record to be on its team."""
POOL_FILE = "pool.yaml"


@dataclass(frozen=True)
class BenchmarkRoster:
    """The pool file a benchmark runs on, and the models left out of it with the share each records."""

    pool: str
    left_out: dict[str, float] = field(default_factory=dict)


def asked_questions(problems: Iterable[Problem]) -> set[str]:
    """The recordings' ids of the questions the composites ask (`Problem.source_ids`)."""
    return {qid for problem in problems for qid in problem.source_ids()}


def _recorded_ids(files: Sequence[str], model: str) -> tuple[set[str], set[str]]:
    """The question ids the replay `files` hold, and those among them that record `model`'s answer."""
    held: set[str] = set()
    answered: set[str] = set()
    for name in files:
        for recording in replay_table(resolve_replay_path(name)).recordings:
            held.add(recording.id)
            if model in recording.responses:
                answered.add(recording.id)
    return held, answered


def recorded_shares(pool: Pool, asked: set[str]) -> dict[str, float]:
    """Each replay model's share of the `asked` question ids it has a recording of, by model spec; only
    the ids some replay file of the pool holds count (an id no file holds says nothing about a model)."""
    held: set[str] = set()
    answered: dict[str, set[str]] = {}
    for agent in pool:
        if agent.kind == AgentKind.LLM and agent.model.provider == Provider.REPLAY and agent.model.spec not in answered:
            files, model = split_replay_target(agent.model.target)
            in_files, answered[agent.model.spec] = _recorded_ids(files, model)
            held |= in_files
    known = asked & held
    if not known:
        return {}
    return {spec: len(ids & known) / len(known) for spec, ids in answered.items()}


def _pool_path(pool_spec: str) -> Path:
    return Path(pool_spec).expanduser() if pool_spec else default_pool_path()


def benchmark_roster(pool_spec: str, problems: Sequence[Problem], folder: Path,
                     minimum: float = MIN_RECORDED) -> BenchmarkRoster:
    """The roster of the benchmark whose training composites are `problems`: `pool_spec` itself when every
    replay model records at least `minimum` of their questions, else the pool without the others, written
    to `folder/pool.yaml`.

    Raises:
        DatasetError: No model of the pool records enough of the questions (the benchmark has no team).
    """
    source = _pool_path(pool_spec)
    path = folder / POOL_FILE
    pool = load_pool(source)
    shares = recorded_shares(pool, asked_questions(problems))
    low = {spec: share for spec, share in shares.items() if share < minimum}
    if not low:
        if path.resolve() != source.resolve():  # a roster an earlier run of other settings left there
            path.unlink(missing_ok=True)
        return BenchmarkRoster(pool_spec)
    names = {agent.model.spec: agent.model.model_name for agent in pool}
    if len(low) == len({agent.model.spec for agent in pool if agent.kind == AgentKind.LLM}):
        raise DatasetError(f"{source}: no model of the pool records {minimum:.0%} of the questions of the "
                           "benchmark's training composites")
    # Made absolute first, so the specs read as the loaded agents' do and the file loads from its folder.
    document = absolute_document(read_pool_document(source), source.resolve())
    document["models"] = [m for m in document.get("models", []) if m["spec"] not in low]
    document["agents"] = [a for a in document.get("agents", []) if a["model"]["spec"] not in low]
    document = {key: value for key, value in document.items() if value != []}
    left_out = {names[spec]: share for spec, share in low.items()}
    header = (f"# {source.name} less the replay models that record fewer than {minimum:.0%} of the questions\n"
              "# of this benchmark's training composites (reso.evals.jobs.benchmark_pool); left out, with the "
              "share\n"
              "# of those questions each records:\n"
              + "".join(f"#   {name}: {left_out[name]:.1%}\n" for name in sorted(left_out, key=str.lower)))
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(header + yaml.safe_dump(document, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return BenchmarkRoster(str(path), left_out)
