"""`reso bench …`: benchmark scripts that measure ratios side by side in one run and print JSON."""

from __future__ import annotations

import typer

app = typer.Typer(help="Benchmarks: side-by-side measurements that print one JSON object last.",
                  no_args_is_help=True)


@app.command("dag")
def dag_command(
    questions: int = typer.Option(30, min=1, help="Questions per level (Easy / Medium / Hard)."),
    median_ms: float = typer.Option(40.0, min=0.0, help="Median fake-agent latency (log-normal), ms."),
    sigma: float = typer.Option(0.6, min=0.0, help="Shape of the log-normal latency."),
    overhead_questions: int = typer.Option(200, min=1, help="Hard-size questions of the zero-latency phase."),
    agents: int = typer.Option(6, min=1, help="Fake agents in the pool."),
    k: int = typer.Option(2, min=1, help="Candidates per subtask."),
    scorer: str = typer.Option("consensus", help="CRM scorer spec."),
    seed: int = typer.Option(0, help="Seed of DAGs, latencies and tie-breaks."),
    profile: str = typer.Option("", help="Write cProfile stats of the overhead phase to this file."),
    json_output: bool = typer.Option(False, "--json", help="Print one JSON object last."),
) -> None:
    """Wall time vs critical path and vs sequential execution, eager vs waves, and engine overhead."""
    import asyncio
    import cProfile
    import json

    from reso.evals.bench.dag import render_table, run_bench

    profiler = cProfile.Profile() if profile else None
    report = asyncio.run(run_bench(questions=questions, median_ms=median_ms, sigma=sigma,
                                   overhead_questions=overhead_questions, agents=agents, k=k, scorer=scorer,
                                   seed=seed, profile=profiler))
    if profiler is not None:
        profiler.dump_stats(profile)
    if json_output:
        typer.echo(json.dumps(report))
    else:
        from rich.console import Console

        Console().print(render_table(report))
