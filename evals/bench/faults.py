"""`reso bench faults`: ReSo on GSM8K-MAS with every LLM model behind a fault injector, at several fault rates.

For each rate the two-model replay pool's LLM models (GPT-4 and Mixtral, `two_model_pool.yaml`, whose
recordings the GSM8K-MAS composites come from) are wrapped in `reso.agents.adapters.faults.FaultyChatModel`
(timeouts, 429 with `Retry-After`, 500, empty text, text with no answer, garbage, drawn uniformly), and a
fresh ReSo team (its own in-memory DADB, breakers and retry policy) runs `run_eval` in training mode over the
same questions. Reported per rate: items completed (a results row written), items lost (no row), exceptions
that escaped `run_eval` (each one followed by a resume, as an operator would), accuracy, retries spent, and
what was injected. The waits are short (`Retry-After` 0.05 s, backoff from 0.02 s) so that three rates over
200 questions run in a few minutes on two cores.

Then the case only the circuit breaker covers: the DADB the first training run learned, frozen (test mode
learns nothing from failures), with the pool's first LLM model failing every call with HTTP 500, against the
same run with it healthy; `calls_to_first_llm_model` shows how often the engine still asked it.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reso.agents.adapters.faults import FAULT_KINDS, FaultConfig, FaultKind, FaultyChatModel
from reso.agents.adapters.health import Health
from reso.agents.adapters.retry import RetryPolicy
from reso.agents.dadb.base import Mode
from reso.agents.pool import Pool
from reso.agents.profiles import AgentKind
from reso.evals.portable import portable_text
from reso.graphs.run_records import RunStatus

MAX_RESUMES = 3


@dataclass(frozen=True)
class FaultBench:
    """What one bench run measures."""

    questions: int = 200
    rates: Sequence[float] = (0.0, 0.1, 0.3)
    seed: int = 0
    level: str = "easy"
    kinds: tuple[FaultKind, ...] = FAULT_KINDS
    concurrency: int = 16
    call_timeout_s: float = 1.0
    hang_s: float = 1.5
    retry_after_s: float = 0.05
    retry: RetryPolicy = field(default_factory=lambda: RetryPolicy(
        attempts=3, initial_s=0.02, max_backoff_s=0.2, jitter_s=0.02, max_retry_after_s=1.0))
    breaker_threshold: int = 5
    breaker_cooldown_s: float = 5.0
    scorer: str = "consensus"
    dead_endpoint: bool = True


def load_questions(level: str, n: int) -> list[Any]:
    """The first `n` items of GSM8K-MAS `level`, train split then test split (no question on both)."""
    from reso.evals.datasets import load_dataset

    problems = [*load_dataset(f"gsm8k-mas-{level}-train"), *load_dataset(f"gsm8k-mas-{level}-test")]
    if n > len(problems):
        raise ValueError(f"--questions {n}: GSM8K-MAS-{level} has {len(problems)} items (train + test)")
    return problems[:n]


def faulty_pool(pool: Pool, faults: FaultConfig | None, only: Collection[str] | None = None) -> Pool:
    """`pool` with `faults` on the model of every LLM agent, or of those whose model spec is in `only`
    (tool agents are left exact)."""
    agents = [agent.model_copy(update={"model": agent.model.model_copy(update={"faults": faults})})
              if agent.kind == AgentKind.LLM and (only is None or agent.model.spec in only) else agent
              for agent in pool]
    return Pool(agents, name=f"{pool.name}+faults", source=pool.source)


_TRANSPORT_ERRORS = ("TimeoutError", "APITimeoutError", "RateLimitError", "InternalServerError",
                     "APIConnectionError")


def is_transport_error(error: str | None) -> bool:
    """Whether a recorded error line is a timeout or HTTP failure that outlasted its retries."""
    return error is not None and error.split(":", 1)[0] in _TRANSPORT_ERRORS


def _candidates(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [c for row in rows for step in row["steps"] for c in step["candidates"]]


async def _run_rate(bench: FaultBench, rate: float, problems: Sequence[Any], out: Path, *,
                    mode: Mode = Mode.TRAIN, dead: bool = False, db: Path | None = None) -> dict[str, Any]:
    """One run: every LLM model faulty at `rate`, or (`dead`) only the pool's first LLM model, failing
    every call with HTTP 500. Training runs write their DADB to `out/dadb.sqlite`; test runs read `db`."""
    import dataclasses

    from reso.agents.adapters.invoke import models_for_pool
    from reso.evals.eval_config import EvalConfig, RunOptions
    from reso.evals.methods import parse_method
    from reso.evals.results import ResultsFile
    from reso.evals.runner import run_eval
    from reso.graphs.escalation import AskingRule
    from reso.graphs.settings import ReSoSettings
    from reso.graphs.team import build_team

    out.mkdir(parents=True, exist_ok=True)
    db_path = out / "dadb.sqlite" if mode == Mode.TRAIN else db
    # The paper's fixed k: every call a step makes is one the faults can hit, whatever its answers.
    from reso.agents.defaults import two_model_pool_path

    settings = ReSoSettings().replace({"asking.rule": AskingRule.FIXED, "reward.scorer": bench.scorer,
                                       "limits.call_timeout_s": bench.call_timeout_s},
                                      pool=str(two_model_pool_path()), mode=mode, seed=bench.seed,
                                      db=str(db_path or ""))
    base = await asyncio.to_thread(build_team, settings)
    faults = FaultConfig(rate=rate, kinds=("server_error",) if dead else bench.kinds, seed=bench.seed,
                         retry_after_s=bench.retry_after_s, hang_s=bench.hang_s)
    first_llm = next(agent.model for agent in base.pool if agent.kind == AgentKind.LLM)
    dead_spec = first_llm.spec
    pool = faulty_pool(base.pool, faults, only={dead_spec} if dead else None)
    health = Health.for_pool(pool, threshold=bench.breaker_threshold, cooldown_s=bench.breaker_cooldown_s,
                             max_cooldown_s=max(bench.breaker_cooldown_s, 60.0))
    team = dataclasses.replace(base, pool=pool, models=models_for_pool(pool), health=health, retry=bench.retry)
    config = EvalConfig(dataset=f"gsm8k-mas-{bench.level}", method=parse_method("reso", pool), out=out,
                        settings=settings, run=RunOptions(concurrency=bench.concurrency),
                        command=["reso", "bench", "faults"])
    started = time.monotonic()
    escaped: list[str] = []
    for _ in range(1 + MAX_RESUMES):
        try:
            await run_eval(config, problems, team)
            break
        except Exception as error:  # noqa: BLE001 - counted: the bench measures exactly these
            escaped.append(f"{type(error).__name__}: {error}"[:200])
    wall = time.monotonic() - started
    with ResultsFile(out / "results.jsonl") as results:
        rows = [row for p in problems if (row := results.done.get(p.id)) is not None]
    candidates = _candidates(rows)
    injected: Counter[str] = Counter()
    for model in {id(m): m for m in team.models.values()}.values():
        if isinstance(model, FaultyChatModel):
            injected.update(model.injected)
    model_calls = sum(m.calls for m in {id(m): m for m in team.models.values()}.values()
                      if isinstance(m, FaultyChatModel))
    n = len(problems)
    written = portable_text(dead_spec, out)  # as the results file writes a spec (reso.evals.portable)
    on_dead = [c for c in candidates if c["model"] == written]
    return {
        "fault_rate": rate,
        "mode": settings.mode,
        "faulty_model": first_llm.short_name if dead else "every LLM model",
        "calls_to_first_llm_model": len(on_dead),
        "questions": n,
        "completed": len(rows),
        "lost": n - len(rows),
        "escaped_exceptions": len(escaped),
        "accuracy": sum(1 for row in rows if row["correct"]) / n if n else 0.0,
        "failed_items": sum(1 for row in rows if row["status"] != RunStatus.DONE),
        "candidate_calls": len(candidates),
        "retry_calls": sum(int(c.get("retries", 0)) for c in candidates),
        "failed_calls": sum(1 for c in candidates if c.get("error")),
        "unrecovered_transport_errors": sum(1 for c in candidates if is_transport_error(c.get("error"))),
        "llm_calls_made": model_calls,
        "injected": dict(sorted(injected.items())),
        "injected_share": sum(injected.values()) / model_calls if model_calls else 0.0,
        "breaker_trips": sum(s["trips"] for s in health.snapshot().values()),
        "wall_s": round(wall, 2),
        "errors": escaped,
    }


async def run_bench(bench: FaultBench, out: Path | None = None,
                    log: Callable[[str], None] = lambda line: None) -> dict[str, Any]:
    """Run every rate of `bench` over the same questions and return the report (`rows`, one per rate)."""
    problems = load_questions(bench.level, bench.questions)
    with tempfile.TemporaryDirectory(prefix="reso-bench-faults-") as scratch:
        root = out or Path(scratch)
        rows = []
        for rate in bench.rates:
            log(f"fault rate {rate:g}: {len(problems)} questions")
            rows.append(await _run_rate(bench, rate, problems, root / f"rate-{rate:g}"))
        dead = None
        if bench.dead_endpoint:
            # The DADB the first training run learned, frozen: what a deployed team selects with.
            learned = root / f"rate-{bench.rates[0]:g}" / "dadb.sqlite" if bench.rates else None
            log(f"one LLM model always failing, frozen DADB: {len(problems)} questions")
            dead = {"dadb": f"learned at fault rate {bench.rates[0]:g}" if learned else "empty",
                    "healthy": await _run_rate(bench, 0.0, problems, root / "test-healthy", mode=Mode.TEST, db=learned),
                    "dead": await _run_rate(bench, 1.0, problems, root / "test-dead", mode=Mode.TEST, dead=True,
                                            db=learned)}
    return {
        "bench": "faults",
        "dataset": f"gsm8k-mas-{bench.level} (train + test)",
        "pool": "two-model replay pool, every LLM model behind the fault injector",
        "kinds": list(bench.kinds),
        "seed": bench.seed,
        "retry": {"attempts": bench.retry.attempts, "initial_s": bench.retry.initial_s,
                  "max_backoff_s": bench.retry.max_backoff_s, "retry_after_s": bench.retry_after_s},
        "call_timeout_s": bench.call_timeout_s,
        "rows": rows,
        "dead_endpoint": dead,
    }


def render_table(report: dict[str, Any]) -> Any:
    """A rich table of the report's rows (and of the dead-endpoint runs, when present)."""
    from rich.table import Table

    rows = [(f"{row['fault_rate']:.0%} faulty, train", row) for row in report["rows"]]
    if report.get("dead_endpoint"):
        healthy, dead = report["dead_endpoint"]["healthy"], report["dead_endpoint"]["dead"]
        rows += [("healthy, test", healthy), (f"{dead['faulty_model']} dead, test", dead)]
    questions = rows[0][1]["questions"] if rows else 0
    table = Table(title=f"faults: {questions} questions, {report['dataset']}")
    columns = ("run", "completed", "lost", "escaped", "accuracy", "retries", "failed calls", "injected",
               "calls to 1st LLM", "breaker trips", "wall s")
    for column in columns:
        table.add_column(column, justify="right")
    for label, row in rows:
        table.add_row(label, str(row["completed"]), str(row["lost"]), str(row["escaped_exceptions"]),
                      f"{row['accuracy']:.1%}", str(row["retry_calls"]), str(row["failed_calls"]),
                      str(sum(row["injected"].values())), str(row["calls_to_first_llm_model"]),
                      str(row["breaker_trips"]), f"{row['wall_s']:.1f}")
    return table
