"""`reso demo`: the offline main job (train, then test ReSo against the baselines)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from reso.evals.backends.options import BackendOptions
from reso.evals.cli.errors import fail
from reso.evals.cli.interrupt import answers_saved, resumable
from reso.evals.cli.paths import out_folder
from reso.evals.cli.settings_options import GivenSettings, Tree, settings_options
from reso.evals.jobs.config import DemoConfig

WORLDS_BENCHMARKS = "none: the world's benchmarks"


DEMO_TREES = (Tree("demo", DemoConfig), Tree("backend", BackendOptions))
"""What `reso demo` takes: the job's settings and where it runs."""

DEMO_FORMER_FLAGS: dict[str, str] = {
    **{f"--{name.replace('_', '-')}": f"demo.{name}" for name in
       ("prices", "concurrency", "train_limit", "test_limit", "min_recorded", "train_n", "test_n")},
    "--backend": "backend.kind", "--address": "backend.address", "--workers": "backend.workers",
}
"""`reso demo`'s flags before its options were generated, and the settings that took their place."""


@settings_options(DEMO_TREES, DEMO_FORMER_FLAGS)
def demo_command(
    out: Annotated[Path, typer.Option(help="Output folder for all runs, the CRMs and the reports.")] = Path(
        "runs/demo"),
    json_output: Annotated[bool, typer.Option("--json", help="Print the tables as one JSON object last.")] = False,
    train_questions: Annotated[Optional[str], typer.Option(
        help="Your own recordings: F1[,F2…], files in the vendored format (id, question, answer, responses, "
             "correct) whose questions make the training composites; needs --test-questions, --pool and "
             "--benchmark.", show_default=WORLDS_BENCHMARKS)] = None,
    test_questions: Annotated[Optional[str], typer.Option(
        help="F3[,F4…]: the files whose questions make the test composites (none may be a training question).",
        show_default=WORLDS_BENCHMARKS)] = None,
    benchmark: Annotated[Optional[str], typer.Option(
        help="The name of your benchmark (its folder under --out and its table's title).",
        show_default=WORLDS_BENCHMARKS)] = None,
    *,
    given: GivenSettings,
) -> None:
    """Train ReSo on each benchmark's train split, then compare it on the test split with the baselines."""
    from rich.console import Console

    from reso.evals.backends.base import BackendError, BackendSetupError
    from reso.evals.backends.open import open_backend
    from reso.evals.cli.demo_progress import demo_progress
    from reso.evals.datasets.problem import DatasetError
    from reso.evals.jobs.comparison import comparison_rows, write_comparison
    from reso.evals.jobs.config import WORLDS
    from reso.evals.jobs.demo import run_demo
    from reso.evals.results import ResultsBusyError, ResultsFormatError

    out_folder("--out", out)
    config: DemoConfig = given.build("demo", DemoConfig(out=out))
    backend: BackendOptions = given.build("backend", BackendOptions())
    recorded = _recorded(benchmark, train_questions, test_questions, config.pool, config.train_n, config.test_n)
    pool = config.pool
    if pool or config.prices:
        pool = _check_pool(pool or _world_pool(config.world), Path(config.prices) if config.prices else None, out)
    resumable(lambda: answers_saved(out))  # Ctrl-C: a rerun into OUT resumes
    console = Console(stderr=True)
    config = dataclasses.replace(config, pool=pool, recorded=recorded)
    try:
        with open_backend(backend.kind, address=backend.address or None, workers=backend.workers) as runner, \
                demo_progress(console) as progress:
            by_benchmark = run_demo(dataclasses.replace(config, backend=runner), progress=progress)
    except (ResultsBusyError, ResultsFormatError, BackendSetupError, DatasetError) as error:
        fail(str(error))  # e.g. a folder of other settings, or question files that share a question
    except BackendError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(1) from None
    tables = {stem: comparison_rows(out / stem, summaries) for stem, summaries in by_benchmark.items()}
    path = write_comparison(out, tables)
    frontiers = {stem: _frontier(out / stem) for stem in by_benchmark}
    if json_output:
        typer.echo(json.dumps({"world": "recorded" if recorded else config.world, "level": config.level, "tables": tables,
                               "frontiers": frontiers, "comparison": path.name}))
        return
    titles = {recorded.name: recorded.name} if recorded else {b.stem: b.title for b in WORLDS[config.world]}
    _print_tables(out, tables, frontiers, {stem: f"{titles[stem]}-{config.level.capitalize()}" for stem in tables})
    typer.echo(f"tables: {path}")


def _print_tables(out: Path, tables: dict[str, Any], frontiers: dict[str, Any], titles: dict[str, str]) -> None:
    """Each benchmark's comparison and frontier, named as the documentation names them, and where its reports
    are."""
    from rich.console import Console

    from reso.evals.cli.demo_tables import print_benchmark
    from reso.evals.cli.frontier import print_frontier
    from reso.evals.reports.frontier import Frontier
    from reso.evals.reports.results_doc import UNIT

    for stem, rows in tables.items():
        console = Console(width=max(Console().width, 132))
        title = f"{titles[stem]} test (recorded answers replayed)"
        print_benchmark(console, title, rows)
        print_frontier(console, Frontier.from_json(frontiers[stem]), f"{title}: the frontier along the budget knob",
                       unit=UNIT)
        typer.echo(f"report: {out / stem / 'report.md'}, frontier: {out / stem / 'frontier.png'}  (per-run "
                   f"reports in {out / stem}/*/report.html)")


def _frontier(folder: Path) -> dict[str, Any]:
    """The frontier the job wrote for one benchmark (`frontier.json`), as read back."""
    from reso.evals.reports.frontier_report import FRONTIER_JSON

    return dict(json.loads((folder / FRONTIER_JSON).read_text(encoding="utf-8")))


def _recorded(name: str | None, train: str | None, test: str | None, pool: str | None, train_n: int,
              test_n: int) -> Any:
    """The user's own benchmark from the options (None when none of them is given); one line and exit code 2
    when they are incomplete or a file is missing."""
    from reso.evals.jobs.recorded_benchmark import RecordedBenchmark

    if name is None and train is None and test is None:
        return None
    if not (name and train and test and pool):
        fail("your own recordings need --train-questions, --test-questions, --benchmark and --pool together")
    try:
        recorded = RecordedBenchmark.of(name, train, test, train_n, test_n)
    except ValueError as error:
        fail(str(error))
    for path in (*recorded.train_files, *recorded.test_files):
        if path.is_dir():
            fail(f"{path}: a folder, not a question file")
        if not path.is_file():
            fail(f"{path}: question file not found")
    return recorded


def _world_pool(world: str) -> str:
    """The pool file of a world (its benchmarks share one); "" for the default pool."""
    from reso.agents.defaults import data_dir
    from reso.evals.jobs.config import WORLDS

    name = WORLDS[world][0].pool
    return str(data_dir() / name) if name else ""


def _check_pool(pool: str, prices: Path | None, out: Path) -> str:
    """The pool file for `--pool` and `--prices`, loaded with its chat models (API-key variables included)
    before the long job starts, so a bad pool file or an unset key is one line and exit code 2 rather than
    a traceback minutes in."""
    from reso.agents.adapters.invoke import models_for_pool
    from reso.agents.pool import load_pool
    from reso.agents.pool_source import pool_file_for

    try:
        path = pool_file_for(pool, prices, out)
        models_for_pool(load_pool(path))
    except ValueError as error:  # PoolError, ModelLoadError, ReplayError, PriceListError
        fail(str(error).strip().splitlines()[0])
    return path
