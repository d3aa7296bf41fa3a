"""`reso synth …`: build benchmarks in the ReSo release format and validate benchmark files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from reso.evals.cli.errors import fail
from reso.evals.cli.paths import out_file

ONE_OF_THEM = "none: one of --pool and --questions is needed"

app = typer.Typer(help="Synthesise multi-step benchmarks (MAS format from a pool or any file of questions, "
                       "GSM8K-MAS) and validate them.",
                  no_args_is_help=True)

SizeOption = Annotated[int, typer.Option("--size", "-k", help="Sub-questions per item (3 / 5 / 7 = Easy / Medium / Hard).")]
CountOption = Annotated[int, typer.Option("--n", "-n", help="Number of items.")]
SeedOption = Annotated[int, typer.Option("--seed", help="Seed of the draw; same arguments, same items.")]
OutOption = Annotated[Path, typer.Option("--out", "-o", help="Output file: a JSON list, or JSON Lines if it ends in .jsonl.")]


@app.command("mas")
def mas(
    out: OutOption,
    pool: Annotated[Path | None, typer.Option("--pool", help="Sub-question pool with marked constants UNK(...) (sub_questions/math_test.json or scibench.json format).", show_default=ONE_OF_THEM)] = None,
    questions: Annotated[Path | None, typer.Option("--questions", help="Instead of --pool: any JSON / JSONL (.gz too) file of {id, question, answer}; the constant to link is chosen automatically.", show_default=ONE_OF_THEM)] = None,
    size: SizeOption = 3,
    n: CountOption = 100,
    seed: SeedOption = 0,
    split: Annotated[str | None, typer.Option("--split", help="With --questions: train or test (the sides share no question), or all.", show_default="all")] = None,
    test_fraction: Annotated[float | None, typer.Option("--test-fraction", help="With --questions: share of questions on the test side.", show_default="0.2")] = None,
    id_prefix: Annotated[str | None, typer.Option("--id-prefix", help="Item ids are <prefix>-<i>.", show_default="mas<size>-s<seed>")] = None,
) -> None:
    """Compose linked multi-step questions (random DAG, linked constants, product step) from a pool with
    marked constants (--pool) or from any file of questions with numeric answers (--questions)."""
    from reso.evals.datasets import DatasetError

    out_file("--out", out)
    give_one = ("give one of --pool (a sub-question pool with UNK(...) markers) or --questions (a file of "
                "questions with numeric answers)")
    if pool is not None and questions is not None:
        fail(f"{give_one}, not both")
    if pool is not None:
        if split is not None or test_fraction is not None:
            fail("--split and --test-fraction apply to --questions only (a --pool is used whole)")
        from reso.evals.datasets.raw_records import read_records
        from reso.evals.synth.mas import synthesize_mas

        try:
            items = synthesize_mas([record.data for record in read_records(pool)], size, n, seed,
                                   id_prefix=id_prefix, where=str(pool))
        except (DatasetError, ValueError) as error:
            fail(error)
        _write(items, out)
        return
    if questions is None:
        fail(give_one)

    from reso.evals.synth.questions import SPLITS, build_linked_mas

    split = split or "all"
    if split not in SPLITS:
        fail(f"--split must be 'train', 'test' or 'all', got {split!r}")
    try:
        build = build_linked_mas(questions, size, n, seed, split,
                                 0.2 if test_fraction is None else test_fraction, id_prefix=id_prefix)
    except (DatasetError, ValueError) as error:
        fail(error)
    typer.echo(f"note: {build.summary(split)}", err=True)
    _write(build.items, out)


@app.command("gsm8k")
def gsm8k(
    out: OutOption,
    replay: Annotated[Path | None, typer.Option("--replay", help="Replay JSONL (id, question, answer).", show_default="the vendored GSM8K recordings")] = None,
    size: SizeOption = 3,
    n: CountOption = 100,
    seed: SeedOption = 0,
    split: Annotated[str, typer.Option("--split", help="train or test: the sides share no question.")] = "train",
    test_fraction: Annotated[float, typer.Option("--test-fraction", help="Share of questions on the test side.")] = 0.2,
    id_prefix: Annotated[str | None, typer.Option("--id-prefix", help="Item ids are <prefix>-<i>.", show_default="gsm8k-mas<size>-<split>-s<seed>")] = None,
) -> None:
    """Compose GSM8K-MAS items: k verbatim recorded GSM8K questions plus the product step, split by question."""
    from reso.agents.defaults import default_replay_path
    from reso.evals.datasets import DatasetError
    from reso.evals.synth.gsm8k import build_gsm8k_mas

    out_file("--out", out)
    if split not in ("train", "test"):
        fail(f"--split must be 'train' or 'test', got {split!r}")
    try:
        items = build_gsm8k_mas(replay or default_replay_path(), size, n, seed, split,  # type: ignore[arg-type]
                                test_fraction, id_prefix=id_prefix)
    except (DatasetError, ValueError) as error:
        fail(error)
    _write(items, out)


@app.command("validate")
def validate(
    file: Annotated[Path, typer.Argument(help="A benchmark file in the release format (.json list or .jsonl).")],
    json_output: Annotated[bool, typer.Option("--json", help="Print the counts and reasons as one JSON object.")] = False,
) -> None:
    """Recompute every item's answers from its DAG; print counts and reasons; exit 1 if any is invalid."""
    import json

    from reso.evals.datasets import DatasetError
    from reso.evals.validate import validate_file

    try:
        reports = validate_file(file)
    except DatasetError as error:
        fail(error)
    invalid = [report for report in reports if not report.valid]
    if json_output:
        typer.echo(json.dumps({
            "file": str(file), "items": len(reports), "valid": len(reports) - len(invalid), "invalid": len(invalid),
            "reasons": {str(report.index): report.problems for report in invalid},
        }, indent=2))
    else:
        for report in invalid:
            for problem in report.problems:
                typer.echo(f"{report.where}: {problem}")
        typer.echo(f"{file}: {len(reports)} items, {len(reports) - len(invalid)} valid, {len(invalid)} invalid")
    if invalid:
        raise typer.Exit(1)


def _write(items: list[dict], out: Path) -> None:
    import json

    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        if out.suffix in (".jsonl", ".ndjson"):
            text = "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items)
        else:
            text = json.dumps(items, ensure_ascii=False, indent=1) + "\n"
        out.write_text(text, encoding="utf-8")
    except OSError as error:
        fail(f"cannot write {out}: {error.strerror or error}")
    typer.echo(f"wrote {len(items)} items to {out}")
