"""`reso eval`: run one method over one dataset into an output folder (resumable)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from reso.evals.backends.options import BackendOptions
from reso.evals.cli.interrupt import answers_saved, resumable
from reso.evals.cli.settings_options import GivenSettings, Tree, settings_options
from reso.evals.run_options import RunOptions
from reso.graphs.settings import FORMER_NAMES, ReSoSettings

if TYPE_CHECKING:
    from reso.agents.pool_source import PoolFile
    from reso.evals.datasets import Problem
    from reso.evals.eval_config import EvalConfig
    from reso.evals.methods import Method
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


EVAL_TREES = (Tree("", ReSoSettings), Tree("run", RunOptions), Tree("backend", BackendOptions))
"""What `reso eval` takes: the run settings, the run's own options and where it runs."""

FORMER_FLAGS: dict[str, str] = {
    **{"--" + name.replace("_", "-"): key for name, key in FORMER_NAMES.items()},
    **{f"--{name.replace('_', '-')}": f"run.{name}" for name in
       ("budget_usd", "budget_tokens", "budget_seconds", "prices", "cache", "cache_file", "data_root")},
    "--backend": "backend.kind", "--address": "backend.address", "--workers": "backend.workers",
}
"""`reso eval`'s flags before its options were generated, and the settings that took their place."""


@settings_options(EVAL_TREES, FORMER_FLAGS)
def eval_command(
    dataset: Annotated[str, typer.Option(help="Dataset name (see `reso datasets`) or file path.")],
    out: Annotated[Path, typer.Option(help="Output folder; rerunning into it resumes.")],
    method: Annotated[str, typer.Option(
        help="reso | random | oracle | single:MODEL | cot-sc:MODEL:N | vote:K | vote:A,B,C | cascade:A,B>C")] = "reso",
    quiet: Annotated[bool, typer.Option(help="No progress bar.")] = False,
    *,
    given: GivenSettings,
) -> None:
    """Evaluate METHOD on DATASET; writes results.jsonl, summary.json (and crm_records.jsonl in train mode)."""
    from reso.evals.eval_config import EvalConfig

    options: RunOptions = given.build("run", RunOptions())
    backend: BackendOptions = given.build("backend", BackendOptions())
    base: ReSoSettings = given.build("", ReSoSettings())
    _check_options(out=out, options=options, db=base.db)
    resumable(lambda: answers_saved(out))  # Ctrl-C: a rerun into OUT resumes
    run = _prepare_run(dataset, out, method=method, base=base, options=options)
    config = EvalConfig(dataset=dataset, method=run.method, out=out, settings=run.settings, run=options)
    summary = _run(run, config, quiet=quiet, backend=backend)
    _report(out, {**summary, "dataset": dataset})  # the dataset as given (the files name it from OUT)


def _fail(message: str, code: int = 2) -> typer.Exit:
    """Say `message` on stderr as one `error:` line; the exit to raise (2: the command was wrong, 1: the run)."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def _check_options(*, out: Path, options: RunOptions, db: str) -> None:
    """Refuse paths that cannot be what they name before anything is loaded."""
    from reso.agents.dadb.url import is_postgres_url
    from reso.evals.cli.paths import in_folder, out_file, out_folder

    out_folder("--out", out)
    out_file("run.cache_file", Path(options.cache_file) if options.cache_file else None)
    data_root = Path(options.data_root) if options.data_root else None
    if data_root is not None and data_root.exists():  # a missing one: the dataset that needs it names its file
        in_folder("run.data_root", data_root)
    if db and not is_postgres_url(db) and not Path(db).is_dir():  # a folder: the DADB's own error says so
        out_file("--db", Path(db))


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


def _prepare_run(dataset: str, out: Path, *, method: str, base: ReSoSettings, options: RunOptions) -> _PreparedRun:
    """Load the dataset, settings, pool, method and team; a bad one exits 2 with its one-line error."""
    from reso.agents.adapters.cache import enable_response_cache
    from reso.agents.pool import PoolError
    from reso.agents.pool_source import plan_pool_file
    from reso.evals.datasets import DatasetError, load_dataset
    from reso.evals.method_kind import MethodKind
    from reso.evals.methods import MethodError, parse_method
    from reso.graphs.team import settings_pool, team_for

    try:
        problems = load_dataset(dataset, limit=options.limit,
                                **({"data_root": Path(options.data_root)} if options.data_root else {}))
        # The pool file a replay pool or a price list needs is written into OUT once the run starts.
        pool_file = plan_pool_file(base.pool or None, Path(options.prices) if options.prices else None, out)
        settings = base.replace(pool=pool_file.path, db=dadb_target(base.db, out, base.mode))
        loaded = pool_file.pool or settings_pool(settings)
        parsed = parse_method(method, loaded)
        if parsed.kind is MethodKind.VOTE and not parsed.agents and _new_dadb(settings.db, settings.mode):
            # Said before training would create the DADB, which then holds no record to choose the voters by.
            raise MethodError(f"{parsed.name} takes the {parsed.count} models with the best training record, and "
                              f"the DADB {settings.db} does not exist yet: train it first, or name the models: "
                              "vote:A,B,C")
        cache_path = Path(options.cache_file) if options.cache_file else default_cache_file(out)
        if options.cache and cache_path.exists():  # checked now; a new one is made once the run starts
            enable_response_cache(cache_path)
        team = team_for(settings, loaded)
    except (DatasetError, PoolError, MethodError, ValueError) as error:
        raise _fail(str(error)) from None
    return _PreparedRun(problems=problems, pool_file=pool_file, settings=settings, method=parsed, team=team,
                        cache=options.cache, cache_path=cache_path)


def _run(run: _PreparedRun, config: EvalConfig, *, quiet: bool, backend: BackendOptions) -> dict[str, Any]:
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
                open_backend(backend.kind, address=backend.address or None, workers=backend.workers,
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
