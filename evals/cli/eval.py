"""`reso eval`: run one method over one dataset into an output folder (resumable)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from reso.evals.cli.interrupt import answers_saved, resumable
from reso.evals.cli.options import EVERY_ITEM, NO_BUDGET, NO_LIMIT, POOL_PRICES, PRICES_HELP, SCORER_HELP

if TYPE_CHECKING:
    from reso.agents.pool_source import PoolFile
    from reso.evals.datasets import Problem
    from reso.evals.eval_config import EvalConfig
    from reso.evals.methods import Method
    from reso.graphs.settings import ReSoSettings
    from reso.graphs.team import Team


def default_cache_file(out: Path) -> Path:
    """The response cache of a run into `out`: inside it, as everything the run writes is (`--cache-file`
    names one that several runs share)."""
    return out / "responses.sqlite"


def dadb_target(db: str | None, out: Path, mode: str) -> str:
    """What the run's DADB is: `--db` when given; else `OUT/dadb.sqlite` for training (which creates it) or
    when it is there already (a run resumed); else '' for a test run: the trained DADB shipped for the default
    pool, or in memory on any other (`reso.agents.dadb.open.default_db`)."""
    from reso.agents.dadb.base import Mode

    if db:
        return db
    own = out / "dadb.sqlite"
    return str(own) if mode == Mode.TRAIN or own.exists() else ""


def _new_dadb(db: str, mode: str) -> bool:
    """Whether this run would create its DADB (a SQLite file that training opens for the first time)."""
    from reso.agents.dadb.base import Mode
    from reso.agents.dadb.url import is_postgres_url

    return mode == Mode.TRAIN and bool(db) and not is_postgres_url(db) and not Path(db).exists()


def eval_command(
    dataset: Annotated[str, typer.Option(help="Dataset name (see `reso datasets`) or file path.")],
    out: Annotated[Path, typer.Option(help="Output folder; rerunning into it resumes.")],
    method: Annotated[str, typer.Option(
        help="reso | random | oracle | single:MODEL | cot-sc:MODEL:N | vote:K | vote:A,B,C | cascade:A,B>C")] = "reso",
    pool: Annotated[Optional[str], typer.Option(help="Pool YAML, or replay:FILE[,FILE…].",
                                                show_default="the roster, agents/data/zeroeval_pool.yaml")] = None,
    prices: Annotated[Optional[Path], typer.Option(help=PRICES_HELP, show_default=POOL_PRICES)] = None,
    limit: Annotated[Optional[int], typer.Option(help="Only the first N items.", show_default=EVERY_ITEM)] = None,
    seed: Annotated[int, typer.Option(help="Seed for selection tie-breaks and sampling.")] = 0,
    concurrency: Annotated[int, typer.Option(
        help="Questions in flight at once (over all workers with --backend ray).")] = 8,
    mode: Annotated[str, typer.Option(help="train (update the DADB, write CRM records) | test (frozen).")] = "test",
    db: Annotated[Optional[str], typer.Option(envvar="RESO_DB_URL", show_envvar=False, help=(
        "DADB: a SQLite file or a postgresql:// URL (a test run reads one that exists; only --mode train creates "
        "one), or a DADB export (.json, test runs); default $RESO_DB_URL, else OUT/dadb.sqlite when training, and "
        "when testing the trained DADB shipped for the default pool (another pool: in memory)."))] = None,
    scorer: Annotated[Optional[str], typer.Option(help=SCORER_HELP, show_default="consensus")] = None,
    skills: Annotated[Optional[str], typer.Option(
        help="Question-skills folder: each model's chance on a subtask from its record on the nearest past "
             "subtasks (reso demo writes one per benchmark).",
        show_default="none: each model's pooled record")] = None,
    k: Annotated[Optional[int], typer.Option(
        help="--asking fixed: candidates per subtask; --asking confidence: its first stage.",
        show_default="2")] = None,
    answer_value: Annotated[Optional[float], typer.Option(
        "--answer-value", help="The budget knob: what a right answer to a question is worth, in USD; every cost "
        "decision reads it (inf: price counts for nothing).", show_default="0.05")] = None,
    asking: Annotated[Optional[str], typer.Option(
        help="How the fine stage asks: priced (while the expected gain x the answer's value exceeds the price), "
             "confidence (while the best score is below --confidence) or fixed (--k at once).",
        show_default="priced")] = None,
    k_max: Annotated[Optional[int], typer.Option(
        help="At most this many candidates per subtask (--asking confidence: required).",
        show_default="4 with --asking priced")] = None,
    confidence: Annotated[Optional[float], typer.Option(
        help="--asking confidence: ask one more candidate while the best CRM score is below this.",
        show_default="none: required with --asking confidence")] = None,
    peer_margin: Annotated[Optional[float], typer.Option(
        help="--asking confidence: of the first k, skip a candidate whose model's record is more than this below "
             "the first's (1: all k answer).", show_default="0.1")] = None,
    escalate_to: Annotated[Optional[str], typer.Option(
        help="--asking confidence: whom one more candidate is. The adaptive stage: ranked (the first candidate in "
             "the cost-aware order that could beat the best answer so far) or reliable (the one with the best "
             "training record, whatever its price). The peer stage, with a peer:DIR scorer: diverse (among peers, "
             "the one whose mistakes go least with those already asked) or diverse-priced (the same, each peer's "
             "record net of its price).", show_default="ranked")] = None,
    exploration: Annotated[Optional[float], typer.Option(
        help="Exploration constant of the selection policy (training; 1 is plain Thompson sampling).",
        show_default="the policy's own: 0.3 for Thompson sampling")] = None,
    integration: Annotated[Optional[str], typer.Option(
        help="tool: integration steps go to the exact tool for every method | select.",
        show_default="tool")] = None,
    embedder: Annotated[Optional[str], typer.Option(help="Subtask embedder: minilm | hash:DIM | openai:MODEL.",
                                                    show_default="minilm")] = None,
    budget_usd: Annotated[Optional[float], typer.Option(help="Stop calling models past this run total (USD).",
                                                        show_default=NO_LIMIT)] = None,
    max_usd: Annotated[Optional[float], typer.Option(help="USD budget per question.",
                                                     show_default=NO_BUDGET)] = None,
    budget_tokens: Annotated[Optional[int], typer.Option(help="Stop calling models past this run total of tokens.",
                                                         show_default=NO_LIMIT)] = None,
    budget_seconds: Annotated[Optional[float], typer.Option(help="Stop calling models after this long (s).",
                                                            show_default=NO_LIMIT)] = None,
    max_tokens: Annotated[Optional[int], typer.Option(help="Token budget per question.",
                                                      show_default=NO_BUDGET)] = None,
    max_seconds: Annotated[Optional[float], typer.Option(help="Wall-time budget per question (s).",
                                                         show_default=NO_BUDGET)] = None,
    cache: Annotated[bool, typer.Option(help="Serve identical model calls from the response cache.")] = True,
    cache_file: Annotated[Optional[Path], typer.Option(
        help="Response cache file; default OUT/responses.sqlite (name one file to share it between runs).")] = None,
    data_root: Annotated[Optional[Path], typer.Option(help="Folder holding reso-mas/ and gsm8k-replay/.",
                                                      show_default="$RESO_DATA_ROOT, else ../shared/data")] = None,
    quiet: Annotated[bool, typer.Option(help="No progress bar.")] = False,
    backend: Annotated[str, typer.Option(
        help="local: this process | ray: Ray workers, each with its own team (see README, cluster).")] = "local",
    address: Annotated[Optional[str], typer.Option(
        help="--backend ray: the Ray cluster to join (HOST:PORT, or auto); default: a local Ray instance.")] = None,
    workers: Annotated[int, typer.Option(min=1, help="--backend ray: workers (Ray actors) to start.")] = 2,
) -> None:
    """Evaluate METHOD on DATASET; writes results.jsonl, summary.json (and crm_records.jsonl in train mode)."""
    from reso.evals.eval_config import EvalConfig

    _check_options(out=out, backend=backend, address=address, cache_file=cache_file, data_root=data_root, db=db)
    resumable(lambda: answers_saved(out))  # Ctrl-C: a rerun into OUT resumes
    overrides = {"scorer": scorer, "skills": skills, "k": k, "embedder": embedder, "max_usd": max_usd, "max_tokens": max_tokens,
                 "max_seconds": max_seconds, "k_max": k_max, "confidence": confidence, "answer_value_usd": answer_value,
                 "asking": asking, "peer_margin": peer_margin,
                 "escalate_to": escalate_to, "exploration": exploration, "integration": integration}
    run = _prepare_run(dataset, out, method=method, pool=pool, prices=prices, limit=limit, seed=seed, mode=mode,
                       db=db, overrides=overrides, cache=cache, cache_file=cache_file, data_root=data_root)
    config = EvalConfig(dataset=dataset, method=run.method, out=out, settings=run.settings, concurrency=concurrency,
                        limit=limit, budget_usd=budget_usd, budget_tokens=budget_tokens,
                        budget_seconds=budget_seconds)
    summary = _run(run, config, quiet=quiet, backend=backend, address=address, workers=workers)
    _report(out, {**summary, "dataset": dataset})  # the dataset as given (the files name it from OUT)


def _fail(message: str, code: int = 2) -> typer.Exit:
    """Say `message` on stderr as one `error:` line; the exit to raise (2: the command was wrong, 1: the run)."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def _check_options(*, out: Path, backend: str, address: str | None, cache_file: Path | None = None,
                   data_root: Path | None = None, db: str | None = None) -> None:
    """Refuse options that cannot go together, and paths that cannot be what they name, before anything is
    loaded."""
    from reso.agents.dadb.url import is_postgres_url
    from reso.evals.cli.paths import in_folder, out_file, out_folder

    out_folder("--out", out)
    out_file("--cache-file", cache_file)
    if data_root is not None and data_root.exists():  # a missing one: the dataset that needs it names its file
        in_folder("--data-root", data_root)
    if db and not is_postgres_url(db) and not Path(db).is_dir():  # a folder: the DADB's own error says so
        out_file("--db", Path(db))
    if backend not in ("local", "ray"):
        raise _fail("--backend must be local or ray")
    if address is not None and backend != "ray":
        raise _fail("--address goes with --backend ray")


@dataclass(frozen=True)
class _PreparedRun:
    """What a run needs once its options are read: the questions, settings, method and team, and the pool file
    and response cache it writes or opens when it starts."""

    problems: list[Problem]
    pool_file: PoolFile
    settings: ReSoSettings
    method: Method
    team: Team
    cache: bool
    cache_path: Path

    def start(self) -> None:
        """Once nothing refuses the run (method, results folder): write what it needs and say what it lacks."""
        from reso.agents.adapters.cache import disable_response_cache, enable_response_cache
        from reso.graphs.dadb_notice import untrained_dadb

        self.pool_file.write()
        if self.cache:
            enable_response_cache(self.cache_path)
        else:  # the cache is process-wide: an earlier in-process run may have installed one
            disable_response_cache()
        notice = untrained_dadb(self.settings, self.team.dadb) if self.method.kind.reads_dadb else None
        if notice is not None:
            typer.echo(notice.line, err=True)


def _prepare_run(dataset: str, out: Path, *, method: str, pool: str | None, prices: Path | None,
                 limit: int | None, seed: int, mode: str, db: str | None, overrides: dict[str, Any],
                 cache: bool, cache_file: Path | None, data_root: Path | None) -> _PreparedRun:
    """Load the dataset, settings, pool, method and team; a bad one exits 2 with its one-line error."""
    from reso.agents.adapters.cache import enable_response_cache
    from reso.agents.pool import PoolError
    from reso.agents.pool_source import plan_pool_file
    from reso.evals.datasets import DatasetError, load_dataset
    from reso.evals.method_kind import MethodKind
    from reso.evals.methods import MethodError, parse_method
    from reso.graphs.escalation import policy_for
    from reso.graphs.settings import ReSoSettings
    from reso.graphs.team import settings_pool, team_for

    try:
        problems = load_dataset(dataset, limit=limit, **({"data_root": data_root} if data_root else {}))
        # The pool file a replay pool or a price list needs is written into OUT once the run starts.
        pool_file = plan_pool_file(pool, prices, out)
        settings = ReSoSettings().replace(
            pool=pool_file.path, seed=seed, mode=mode, db=dadb_target(db, out, mode),
            **{key: value for key, value in overrides.items() if value is not None})
        # checks the fine stage's settings before any run
        policy_for(settings.asking, k=settings.k, k_max=settings.k_max, confidence=settings.confidence,
                   peer_margin=settings.peer_margin, escalate_to=settings.escalate_to,
                   answer_value_usd=settings.answer_value_usd)
        loaded = pool_file.pool or settings_pool(settings)
        parsed = parse_method(method, loaded)
        if parsed.kind is MethodKind.VOTE and not parsed.agents and _new_dadb(settings.db, mode):
            # Said before training would create the DADB, which then holds no record to choose the voters by.
            raise MethodError(f"{parsed.name} takes the {parsed.count} models with the best training record, and "
                              f"the DADB {settings.db} does not exist yet: train it first, or name the models: "
                              "vote:A,B,C")
        cache_path = cache_file or default_cache_file(out)
        if cache and cache_path.exists():  # checked now; a new one is made once the run starts
            enable_response_cache(cache_path)
        team = team_for(settings, loaded)
    except (DatasetError, PoolError, MethodError, ValueError) as error:
        raise _fail(str(error)) from None
    return _PreparedRun(problems=problems, pool_file=pool_file, settings=settings, method=parsed, team=team,
                        cache=cache, cache_path=cache_path)


def _run(run: _PreparedRun, config: EvalConfig, *, quiet: bool, backend: str, address: str | None,
         workers: int) -> dict[str, Any]:
    """Answer the questions on the chosen backend behind a progress bar; the run's summary."""
    import asyncio

    from reso.evals.backends.base import BackendError, BackendSetupError
    from reso.evals.backends.open import open_backend
    from reso.evals.cli.progress_bar import EvalProgress, resumed_rows
    from reso.evals.methods import MethodError
    from reso.evals.results import ResultsBusyError, ResultsFormatError
    from reso.evals.runner import run_eval

    try:
        # A resumed run's bar starts at the items it already has (a finished run's at all of them).
        resumed = resumed_rows(config.out / "results.jsonl", {problem.id for problem in run.problems})
        with EvalProgress(total=len(run.problems), label=f"{run.method.name} on {config.dataset}", quiet=quiet,
                          resumed=resumed) as bar, \
                open_backend(backend, address=address, workers=workers,
                             cache_file=run.cache_path if run.cache else None) as runner:
            return asyncio.run(run_eval(config, run.problems, run.team, progress=bar.advance, backend=runner,
                                        on_start=run.start))
    except (ResultsBusyError, ResultsFormatError, BackendSetupError, MethodError) as error:
        # A method is checked against the DADB's records as the run starts (vote:K picks its K models there).
        raise _fail(str(error)) from None
    except BackendError as error:
        raise _fail(str(error), code=1) from None


def _report(out: Path, summary: dict[str, Any]) -> None:
    """Write the run's report, print its summary line, and exit 1 when every item or every CRM score failed."""
    from reso.evals.reports.report import write_run_report

    write_run_report(out)  # a report across runs is `reso compare`'s (and `reso demo`'s)
    typer.echo(json.dumps({key: summary[key] for key in
                           ("dataset", "method", "mode", "n", "accuracy", "total_tokens", "cost_usd", "stopped")}))
    failure = _every_item_failed(out)
    if failure:
        raise _fail(f"every item failed: {failure}", code=1)
    scoring = summary.get("scorer_failures") or {}
    if scoring.get("scored") and scoring["failed"] == scoring["scored"]:
        raise _fail(f"the CRM failed on every answer it scored: {scoring['first']}", code=1)


def _every_item_failed(out: Path) -> str | None:
    """The first call error when no item of the run produced an answer and every call failed, else None."""
    from reso.agents.adapters.failures import recorded_failure

    results = out / "results.jsonl"
    if not results.exists():
        return None
    errors: list[str] = []
    # A replay agent without a recording (after a wrong parent answer too), a tool given no calculation.
    declines: list[str] = []
    for line in results.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row.get("answer") is not None:
            return None
        for step in row.get("steps", []):
            for candidate in step.get("candidates", []):
                kind = recorded_failure(candidate)
                if kind is None:
                    return None
                (declines if kind.declined else errors).append(candidate["error"])
    return errors[0] if errors else declines[0] if declines else None
