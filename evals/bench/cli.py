"""`reso bench …`: benchmark scripts that measure ratios side by side in one run and print JSON."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Optional, TypeVar

import typer

from reso.evals.cli.options import renamed
from reso.evals.cli.paths import out_file, out_folder

Number = TypeVar("Number", int, float)

app = typer.Typer(help="Benchmarks: side-by-side measurements that print one JSON object last.",
                  no_args_is_help=True)


def emit(report: dict, json_output: bool, render_table) -> None:
    """Print a benchmark's report: one JSON object (`--json`), or its rich table."""
    if json_output:
        import json

        typer.echo(json.dumps(report))
        return
    from rich.console import Console

    Console().print(render_table(report))


def comma_parts(text: str) -> list[str]:
    """The non-empty parts of a comma-separated option, stripped."""
    return [part.strip() for part in text.split(",") if part.strip()]


def comma_numbers(text: str, parse: Callable[[str], Number], option: str) -> list[Number]:
    """A comma-separated option of numbers, each read by `parse` (`int` or `float`); a part that is not one
    is a bad parameter naming `option`."""
    kind = "integers" if parse is int else "numbers"
    try:
        return [parse(part) for part in comma_parts(text)]
    except ValueError:
        raise typer.BadParameter(f"{option} must be comma-separated {kind}, got {text!r}") from None


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
    profile: str = typer.Option("", help="Write cProfile stats of the overhead phase to this file.",
                                show_default="none"),
    json_output: bool = typer.Option(False, "--json", help="Print one JSON object last."),
) -> None:
    """Wall time vs critical path and vs sequential execution, eager vs waves, and engine overhead."""
    import asyncio
    import cProfile

    from reso.evals.bench.dag import DagBench, render_table, run_bench

    out_file("--profile", Path(profile) if profile else None)
    try:
        bench = DagBench(n_agents=agents, k=k, scorer=scorer, seed=seed)
    except ValueError as error:  # an unknown scorer spec, say
        raise typer.BadParameter(str(error)) from None
    profiler = cProfile.Profile() if profile else None
    report = asyncio.run(run_bench(bench, questions=questions, median_ms=median_ms, sigma=sigma,
                                   overhead_questions=overhead_questions, profile=profiler))
    if profiler is not None:
        profiler.dump_stats(profile)
    emit(report, json_output, render_table)


@app.command("selection")
def selection_command(
    sizes: str = typer.Option("63,1000,10000,100000", help="Comma-separated pool sizes."),
    repeats: int = typer.Option(200, min=1, help="Queries timed per size on the FAISS side (the loop stops "
                                "after --loop-budget seconds, at least 3 queries)."),
    dim: int = typer.Option(384, min=2, help="Embedding dimension of the random profile vectors."),
    k: int = typer.Option(2, min=1, help="Candidates returned per subtask."),
    top_m: int = typer.Option(16, min=1, help="Agents retrieved by FAISS before scoring."),
    loop_budget: float = typer.Option(3.0, min=0.0, help="Seconds of loop timing per size."),
    seed: int = typer.Option(0, help="Seed of vectors, statistics and queries."),
    roles: int = typer.Option(4, min=1, help="Also time pools of size/roles models in this many roles sharing "
                              "one profile each (sizes up to 10,000): the default selector against the plain "
                              "top-M search; 1 skips it."),
    json_output: bool = typer.Option(False, "--json", help="Print one JSON object last."),
) -> None:
    """Selection time per subtask: FAISS top-M + vectorised bandit score against the paper's per-agent Python loop."""

    from reso.evals.bench.selection import render_table, run_bench

    size_list = comma_numbers(sizes, int, "--sizes")
    if not size_list or min(size_list) < 1:
        raise typer.BadParameter("--sizes needs at least one positive pool size")
    report = run_bench(size_list, repeats=repeats, dim=dim, k=k, top_m=top_m, loop_budget_s=loop_budget,
                       seed=seed, roles=roles)
    emit(report, json_output, render_table)


@app.command("routing")
def routing_command(
    probs: str = typer.Option("", help="JSON or CSV of agent -> success probability (optionally "
                                         "per domain); default: agents drawn uniformly in [--low, --high]."),
    subtasks: int = typer.Option(2000, min=1, help="Length of the subtask stream."),
    seed: int = typer.Option(0, help="Seed of the default probabilities, the stream and the rewards."),
    seeds: str = typer.Option("", help="Several seeds, e.g. '0-7' or '0,3,5': report means, worst case and "
                              "per-seed rows (overrides --seed).", show_default="none: --seed alone"),
    plot: str = typer.Option("", help="Save cumulative-regret curves to this PNG.", show_default="none"),
    agents: int = typer.Option(63, min=2, help="Agents drawn when no --probs file is given."),
    roles: int = typer.Option(1, min=1, help="Shared profiles: the agents are agents/roles models in this many "
                              "roles, a role's agents share one profile vector, skills are hidden from the "
                              "profiles, and retrieval asks for the default top M (1: every agent its own model)."),
    low: float = typer.Option(0.05, min=0.0, max=1.0, help="Lowest drawn success probability."),
    high: float = typer.Option(0.95, min=0.0, max=1.0, help="Highest drawn success probability."),
    spreads: str = typer.Option("", help="Several success-rate spreads in one run, e.g. '0.05-0.95,0.2-0.7,0-0.7' "
                                "or 'standard' (those three); overrides --low/--high; with --seeds (default 0).",
                                show_default="none: --low to --high"),
    exploration: float = typer.Option(-1.0, help="Override every score variant's exploration constant "
                                      "(negative: each variant's default)."),
    _exploration_c: Annotated[Optional[str], renamed("--exploration-c", "--exploration")] = None,
    question_skills: bool = typer.Option(False, "--question-skills", help=(
        "Routing by question instead: models whose success depends on the question's topic, hidden from their "
        "profiles, routed by their pooled record, by question skills and by the true topic (a bound), at nine "
        "values of a right answer (--subtasks questions in each stream).")),
    models: int = typer.Option(5, min=2, max=20, help="--question-skills: models on the price ladder."),
    topics: int = typer.Option(8, min=2, help="--question-skills: kinds of question."),
    json_output: bool = typer.Option(False, "--json", help="Print one JSON object last."),
) -> None:
    """Cumulative regret and best-agent pick rate of every selection policy (Thompson sampling, KL-UCB, MOSS, the
    UCB variants, greedy, random) over simulated agents; or, with --question-skills, routing by question."""
    import json

    from reso.evals.bench.routing import STANDARD_SPREADS, run_bench, run_seeds, run_spreads

    out_file("--plot", Path(plot) if plot else None)
    if question_skills:
        _question_routing(models, topics, subtasks, seed, json_output)
        return
    c = exploration if exploration >= 0 else None
    try:
        source, picture = (Path(probs) if probs else None), (Path(plot) if plot else None)
        if spreads:
            if source is not None:
                raise ValueError("--spreads draws the agents; it cannot be combined with --probs")
            spread_list = STANDARD_SPREADS if spreads.strip() == "standard" else _parse_spreads(spreads)
            report = run_spreads(spread_list, _parse_seeds(seeds or str(seed)), subtasks, agents, c, roles)
        elif seeds:
            report = run_seeds(_parse_seeds(seeds), source, subtasks, picture, low=low, high=high,
                               agents=agents, exploration_c=c, roles=roles)
        else:
            report = run_bench(source, subtasks, seed, picture, low=low, high=high, agents=agents,
                               exploration_c=c, roles=roles)
    except ValueError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from None
    if json_output:
        typer.echo(json.dumps(report))
        return
    from rich.console import Console

    for row in report.get("spreads", [report]):
        Console().print(_routing_table(row, report["subtasks"]))
    Console().print(f"target (default policy {report['default_policy']!r}, regret <= 25% of random's): "
                    f"{'met' if report['target_default_regret_at_most_25pct_of_random'] else 'not met'}")


def _question_routing(models: int, topics: int, questions: int, seed: int, json_output: bool) -> None:
    """`reso bench routing --question-skills`: the report of `reso.evals.bench.question_routing`."""
    import json

    from reso.evals.bench.question_routing import run_question_routing

    report = run_question_routing(models=models, topics=topics, train=questions, test=questions, seed=seed)
    if json_output:
        typer.echo(json.dumps(report))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"routing by question: {models} models, {topics} topics, {questions} questions a stream")
    for header in ("value of a right answer", "router", "accuracy", "USD / question", "net value / question"):
        table.add_column(header, justify="right")
    for row in report["rows"]:
        for router in ("pooled", "skills", "topic oracle"):
            figures = row[router]
            table.add_row(f"${row['value_usd']:.5f}", router, f"{figures['accuracy']:.1%}",
                          f"{figures['cost_per_question_usd']:.5f}", f"{figures['net_value']:.5f}")
    console = Console()
    console.print(table)
    share = report["skills_share_of_oracle_advantage"]
    console.print("question skills recover " + ("no measurable share" if share is None else f"{share:.0%}")
                  + " of the topic oracle's net-value advantage over the pooled record")


def _routing_table(report: dict, subtasks: int):
    """One spread's policies as a rich table (with worst-seed and target columns when several seeds ran)."""
    from rich.table import Table

    several = "target_met_seeds" in report
    table = Table(title=f"routing: {subtasks} subtasks over {report['agents']} agents ({report['source']})")
    columns = ["policy", "cumulative regret", "vs random", "best-agent picks"]
    for column in columns + (["worst seed", "seeds meeting target"] if several else []):
        table.add_column(column, justify="right")
    for name, row in report["policies"].items():
        cells = [name, f"{row['regret']:.1f}", f"{row['regret_vs_random']:.1%}", f"{row['best_pick_rate']:.1%}"]
        if several:
            cells += [f"{row['regret_vs_random_worst']:.1%}", f"{report['target_met_seeds'][name]} of {len(report['seeds'])}"]
        table.add_row(*cells)
    return table


def _parse_spreads(text: str) -> list[tuple[float, float]]:
    """'0.05-0.95,0.2-0.7' as [(0.05, 0.95), (0.2, 0.7)]."""
    spreads: list[tuple[float, float]] = []
    try:
        for part in comma_parts(text):
            low_text, dash, high_text = part.partition("-")
            if not dash:
                raise ValueError
            spreads.append((float(low_text), float(high_text)))
    except ValueError:
        raise ValueError(f"--spreads must look like '0.05-0.95,0.2-0.7' or 'standard', got {text!r}") from None
    for low, high in spreads:
        if not 0.0 <= low <= high <= 1.0:
            raise ValueError(f"--spreads: need 0 <= low <= high <= 1, got {low}-{high}")
    return spreads


def _parse_seeds(text: str) -> list[int]:
    """'0-7' or '0,3,5' (or a mix) as a list of seeds."""
    seeds: list[int] = []
    try:
        for part in comma_parts(text):
            first, dash, last = part.partition("-")
            seeds.extend(range(int(first), int(last) + 1) if dash else [int(first)])
    except ValueError:
        raise ValueError(f"--seeds must look like '0-7' or '0,3,5', got {text!r}") from None
    return seeds


@app.command("crm")
def crm_command(
    batch_size: int = typer.Option(16, min=1, help="Batch size of the batched mode."),
    n: int = typer.Option(64, min=1, help="Items scored per timed pass."),
    repeats: int = typer.Option(3, min=1, help="Timed passes per mode (the median is reported)."),
    threads: int = typer.Option(0, min=0, help="torch CPU threads (0: torch's default)."),
    seed: int = typer.Option(0, help="Seed of the random model and the synthetic answers."),
    smoke: bool = typer.Option(False, "--smoke",
                               help="Tiny model and short answers: a quick check that the benchmark runs."),
    json_output: bool = typer.Option(False, "--json", help="Print one JSON object last."),
) -> None:
    """Batched against one-at-a-time PRM scoring on a random Qwen2 PRM on the CPU, side by side."""

    from reso.evals.bench.crm import BENCH_CPU_SIZE, render_table, run_crm_bench, smoke_size

    size, sentences = smoke_size() if smoke else (BENCH_CPU_SIZE, (12, 24))
    report = run_crm_bench(batch_size=batch_size, n=n, repeats=repeats, threads=threads or None, size=size,
                           sentences=sentences, seed=seed, progress=lambda line: typer.echo(line, err=True))
    emit(report, json_output, render_table)


@app.command("crm-calls")
def crm_calls_command(
    questions: int = typer.Option(120, min=2, help="MATH level-5 questions whose recorded answers train the CRM."),
    calls: int = typer.Option(300, min=1, help="Calls (slates of three answers) per side per round."),
    rounds: int = typer.Option(5, min=1, help="Alternating rounds (the median is reported)."),
    seed: int = typer.Option(0, help="Seed of the slates."),
    json_output: bool = typer.Option(False, "--json", help="Print one JSON object last."),
) -> None:
    """The small CRM's cost per engine call: flattened trees against scikit-learn, side by side."""

    from reso.evals.bench.crm_calls import render_table, run_bench

    report = run_bench(questions=questions, calls=calls, rounds=rounds, seed=seed,
                       progress=lambda line: typer.echo(line, err=True))
    emit(report, json_output, render_table)


@app.command("startup")
def startup_command(
    runs: int = typer.Option(5, min=1, help="Timed rounds (each: python -c pass, reso --help, reso solve)."),
    question: str = typer.Option("", help="The question to solve (default: a GSM8K question the offline pool "
                                 "has recorded)."),
    json_output: bool = typer.Option(False, "--json", help="Print one JSON object last."),
) -> None:
    """Seconds to `reso solve`'s first progress line (on a pseudo-terminal, warm disk cache) and to its answer,
    beside `python -c pass` and `reso --help`."""
    from reso.evals.bench.startup import DEFAULT_QUESTION, render_table, run_bench

    try:
        report = run_bench(runs=runs, question=question.strip() or DEFAULT_QUESTION)
    except (ValueError, TimeoutError) as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(1) from None
    emit(report, json_output, render_table)


@app.command("eval")
def eval_command(
    questions: int = typer.Option(200, min=1, help="Questions in the timed batch."),
    latency_ms: float = typer.Option(100.0, min=0.001, help="Latency of every fake-agent call, ms."),
    concurrency: int = typer.Option(64, min=1, help="Questions in flight at once."),
    agents: int = typer.Option(4, min=1, help="Latency-faking agents (the calculator tool comes on top)."),
    k: int = typer.Option(2, min=2, help="Candidates per subtask."),
    seed: int = typer.Option(0, help="Seed of selection tie-breaks."),
    trace_memory: bool = typer.Option(False, "--trace-memory", help="Also report tracemalloc's peak (slower run)."),
    profile: str = typer.Option("", help="Write cProfile stats of the timed batch to this file.",
                                show_default="none"),
    json_output: bool = typer.Option(False, "--json", help="Print one JSON object last."),
) -> None:
    """The batch runner's throughput against ceil(questions / concurrency) × critical path, and peak memory."""
    import cProfile

    from reso.evals.bench.eval import render_table, run_bench

    out_file("--profile", Path(profile) if profile else None)
    profiler = cProfile.Profile() if profile else None
    report = run_bench(questions=questions, latency_ms=latency_ms, concurrency=concurrency, agents=agents, k=k,
                       seed=seed, trace_memory=trace_memory, profile=profiler)
    if profiler is not None:
        profiler.dump_stats(profile)
    emit(report, json_output, render_table)


@app.command("faults")
def faults_command(
    questions: int = typer.Option(200, min=1, help="GSM8K-MAS questions (train split, then test; 300 at most)."),
    rates: str = typer.Option("0,0.1,0.3", help="Comma-separated shares of faulty LLM calls, each in [0, 1]."),
    seed: int = typer.Option(0, help="Seed of the faults, the selector's tie-breaks and the DADB's learning."),
    level: str = typer.Option("easy", help="GSM8K-MAS level: easy, medium or hard."),
    concurrency: int = typer.Option(16, min=1, help="Questions in flight at once."),
    out: str = typer.Option("", help="Keep each rate's run folder under this folder (default: a temporary one)."),
    dead_endpoint: bool = typer.Option(True, help="Also run a frozen DADB with one LLM model always failing."),
    json_output: bool = typer.Option(False, "--json", help="Print one JSON object last."),
) -> None:
    """Items completed and lost, escaped exceptions, accuracy and retries with 0 %, 10 %, 30 % faulty calls."""
    import asyncio

    from reso.evals.bench.faults import FaultBench, render_table, run_bench

    out_folder("--out", Path(out) if out else None)
    rate_list = comma_numbers(rates, float, "--rates")
    if not rate_list or any(not 0.0 <= rate <= 1.0 for rate in rate_list):
        raise typer.BadParameter(f"--rates needs numbers in [0, 1], got {rates!r}")
    if level not in ("easy", "medium", "hard"):
        raise typer.BadParameter(f"--level must be easy, medium or hard, got {level!r}")
    bench = FaultBench(questions=questions, rates=tuple(rate_list), seed=seed, level=level, concurrency=concurrency,
                       dead_endpoint=dead_endpoint)
    try:
        report = asyncio.run(run_bench(bench, Path(out) if out else None, log=lambda line: typer.echo(line, err=True)))
    except ValueError as error:  # more questions than the dataset has
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from None
    emit(report, json_output, render_table)


@app.command("scale")
def scale_command(
    workers: str = typer.Option("1,2,4", help="Comma-separated worker counts; the first is efficiency's baseline."),
    questions: int = typer.Option(128, min=1, help="Questions in the batch (the same for every worker count)."),
    latency_ms: float = typer.Option(500.0, min=0.001, help="Latency of every fake-agent call, ms."),
    concurrency: int = typer.Option(8, min=1, help="Questions in flight per worker."),
    nodes: int = typer.Option(2, min=1, help="Nodes of the local Ray cluster started for the benchmark."),
    address: str = typer.Option("", help="Use this running Ray cluster instead of starting one.",
                                show_default="none: a cluster of --nodes started here"),
    seed: int = typer.Option(0, help="Seed of selection tie-breaks."),
    json_output: bool = typer.Option(False, "--json", help="Print one JSON object last."),
) -> None:
    """Items per second of `reso eval --backend ray` with 1, 2 and 4 workers on a local two-node Ray cluster,
    and efficiency = throughput / (workers × one worker's throughput)."""
    from reso.evals.bench.scale import render_table, run_bench

    counts = comma_numbers(workers, int, "--workers")
    if not counts or min(counts) < 1:
        raise typer.BadParameter("--workers needs at least one positive worker count")
    try:
        report = run_bench(workers=counts, questions=questions, latency_ms=latency_ms, concurrency=concurrency,
                           nodes=nodes, seed=seed, address=address or None)
    except ImportError:
        typer.echo("error: reso bench scale needs Ray: pip install 'reso-langgraph[ray]'", err=True)
        raise typer.Exit(2) from None
    except RuntimeError as error:  # a node that did not start
        typer.echo(f"error: {str(error).splitlines()[0]}", err=True)
        raise typer.Exit(1) from None
    emit(report, json_output, render_table)


@app.command("judge")
def judge_command(
    train_questions: list[str] = typer.Option(..., help="Recorded, labelled answers the judge learns from (the "
                                              "many-model replay JSONL of the vendored recordings, or labelled "
                                              "records); several files comma-separated or repeated.",
                                              show_default=False),
    test_questions: list[str] = typer.Option(..., help="Recorded answers to other questions, scored; several "
                                             "files comma-separated or repeated.", show_default=False),
    models: str = typer.Option("", help="Comma-separated models whose answers are chosen among (default: the "
                               "--top best training records among models that answered 90 % of the training "
                               "questions)."),
    top: int = typer.Option(5, min=2, help="How many models by default."),
    pool: str = typer.Option("", help="A pool file whose models the default team is taken from (default: every "
                             "recorded model)."),
    embedder: str = typer.Option("minilm", help="Embedder of the questions (`reso.agents.selection.embeddings`)."),
    crm: str = typer.Option("", help="A CRM spec whose score of each answer is one more input (default: none)."),
    verifier_auc: str = typer.Option("", help="Comma-separated AUCs of synthetic verifiers whose weighted votes are "
                                     "shown beside the judge (default: none)."),
    verifier_crm: str = typer.Option("", help="A CRM spec whose score of each answer read alone weights a vote "
                                     "shown beside the judge (default: none)."),
    seed: int = typer.Option(0, help="Seed of the judge's folds and of the synthetic verifiers."),
    json_output: bool = typer.Option(False, "--json", help="Print one JSON object last."),
) -> None:
    """The signals judge's pick among K models' recorded answers to held-out questions, beside the best fixed
    model, the plurality, the reliability-weighted vote and the oracle, with intervals, and the judge's AUC and
    calibration error (`reso.evals.bench.judge`)."""
    from reso.evals.bench.judge import JudgeBenchError, render_table, run_judge_bench
    from reso.evals.cli.errors import fail
    from reso.reward.config_error import ScorerConfigError

    try:
        report = run_judge_bench([Path(p) for text in train_questions for p in comma_parts(text)],
                                 [Path(p) for text in test_questions for p in comma_parts(text)],
                                 models=comma_parts(models) or None, count=top,
                                 pool=Path(pool) if pool else None, embedder=embedder, crm=crm or None,
                                 verifier_aucs=comma_numbers(verifier_auc, float, "--verifier-auc")
                                 if verifier_auc else (), verifier_crm=verifier_crm or None, seed=seed,
                                 progress=lambda line: typer.echo(line, err=True))
    except (JudgeBenchError, ScorerConfigError) as error:
        fail(error)
    emit(report, json_output, render_table)


@app.command("ceiling")
def ceiling_command(
    folder: Path = typer.Argument(..., help="A benchmark folder of a finished `reso demo` run (its test-single-* "
                                  "runs and their dataset).", show_default=False),
    cheap: str = typer.Option("", help="The model that answers first (default: the most accurate single run "
                              "costing at most a fifth of the strong one's)."),
    strong: str = typer.Option("", help="The model asked when the verifier doubts (default: the most accurate "
                               "single run)."),
    auc: str = typer.Option(",".join(f"{a:g}" for a in (1.0, 0.95, 0.9, 0.85, 0.8, 0.7)),
                            help="Comma-separated AUCs of the synthetic verifiers."),
    crm: str = typer.Option("", help="A CRM spec whose score of the cheap model's lone solution is one more "
                            "verifier (default: none)."),
    peer: str = typer.Option("", help="A third model whose agreement with the cheap answer is one more verifier "
                             "(it answers every sub-question; default: none)."),
    seed: int = typer.Option(0, help="Seed of the synthetic verifiers' noise."),
    json_output: bool = typer.Option(False, "--json", help="Print one JSON object last."),
) -> None:
    """How well a verifier of the cheap model's answers must work for a cascade to lie above the single
    models' hull: the frontier figures of cheap > strong with verifiers of known AUC
    (`reso.evals.bench.verifier_ceiling`)."""
    from reso.evals.bench.verifier_ceiling import CeilingError, render_table, run_ceiling_bench
    from reso.evals.cli.errors import fail
    from reso.evals.reports.compare import CompareError
    from reso.reward.config_error import ScorerConfigError

    try:
        report = run_ceiling_bench(folder, cheap=cheap or None, strong=strong or None,
                                   aucs=comma_numbers(auc, float, "--auc"), crm=crm or None,
                                   peer=peer or None, seed=seed,
                                   progress=lambda line: typer.echo(line, err=True))
    except (CeilingError, CompareError, ScorerConfigError) as error:
        fail(error)
    emit(report, json_output, render_table)
