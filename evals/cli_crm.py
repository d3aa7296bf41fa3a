"""`reso crm …`: train and evaluate Collaborative Reward Models.

`train` builds a small CRM (scikit-learn, CPU, seconds) or fine-tunes a PRM checkpoint with LoRA from
labelled records; `eval` scores labelled records with a trained model or any scorer spec and prints the
figures as one JSON object. Splits select whole questions (`first:N`, `last:N`), so train and test never
share a question. Heavy libraries are imported inside the commands to keep `reso --help` fast.
"""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

app = typer.Typer(help="Train and evaluate Collaborative Reward Models.", no_args_is_help=True)


class CRMKind(str, Enum):
    small = "small"
    prm = "prm"


def _load(data: Path, split: str | None, limit_questions: int | None) -> list[Any]:
    from reso.reward.records import RecordFormatError, load_records, split_by_question

    try:
        records = load_records(data)
        if limit_questions is not None:
            records = split_by_question(records, f"first:{limit_questions}")
        records = split_by_question(records, split)
    except (RecordFormatError, ValueError) as exc:
        _fail(str(exc))
    if not records:
        _fail(f"{data}: no records selected (split {split!r})")
    return records


def _fail(message: str) -> NoReturn:
    # A plain line rather than typer's boxed usage error: a file:line:field message must not be wrapped.
    # Exit code 2: every caller reports bad input (records, split, model spec), as the other commands do.
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code=2)


def _round(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, dict):
        return {k: _round(v) for k, v in value.items()}
    return value


def _print_result(result: dict[str, Any], as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(result, sort_keys=False))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(show_header=True, header_style="bold")
    table.add_column("figure")
    table.add_column("value")
    flat: list[tuple[str, Any]] = []
    for key, value in result.items():
        if isinstance(value, dict):
            for sub, inner in value.items():
                if isinstance(inner, dict):
                    flat.extend((f"{key}.{sub}.{k}", v) for k, v in inner.items())
                else:
                    flat.append((f"{key}.{sub}", inner))
        else:
            flat.append((key, value))
    for key, value in flat:
        table.add_row(key, str(_round(value)))
    Console().print(table)


@app.command()
def train(
    data: Annotated[Path, typer.Option("--data", help="Records: paper JSON/JSONL or the replay JSONL.")],
    out: Annotated[Path, typer.Option("--out", help="Folder to write the trained model to.")],
    kind: Annotated[CRMKind, typer.Option("--kind", help="small (scikit-learn) or prm (LoRA).")] = CRMKind.small,
    base: Annotated[str | None, typer.Option("--base", help="PRM base checkpoint (kind prm).")] = None,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    split: Annotated[str | None, typer.Option("--split", help="Questions to train on: first:N or last:N.")] = None,
    limit_questions: Annotated[
        int | None, typer.Option("--limit-questions", help="Use only the first N questions.")
    ] = None,
    classifier: Annotated[str, typer.Option("--classifier", help="small: hgb or logreg.")] = "hgb",
    embeddings: Annotated[
        bool, typer.Option("--embeddings/--no-embeddings", help="small: add MiniLM embeddings.")
    ] = False,
    cv_folds: Annotated[
        int, typer.Option("--cv-folds", help="small: grouped cross-validation folds to report (0: none).")
    ] = 5,
    epochs: Annotated[float | None, typer.Option("--epochs", help="prm: training epochs.")] = None,
    lr: Annotated[float | None, typer.Option("--lr", help="prm: learning rate.")] = None,
    max_steps: Annotated[int | None, typer.Option("--max-steps", help="prm: stop after N steps.")] = None,
    effective_batch: Annotated[
        int | None, typer.Option("--effective-batch", help="prm: records per optimiser step.")
    ] = None,
) -> None:
    """Train a CRM on labelled records and save it to OUT; prints a JSON summary."""
    records = _load(data, split, limit_questions)
    from reso.reward.records import question_order

    summary: dict[str, Any] = {
        "kind": kind.value,
        "data": str(data),
        "split": split,
        "n": len(records),
        "n_questions": len(question_order(records)),
        "out": str(out),
    }
    if kind is CRMKind.prm:
        if base is None:
            _fail("--kind prm needs --base CHECKPOINT")
        from reso.reward.prm_training import train_prm

        options: dict[str, Any] = {"base": base, "seed": seed}
        for name, value in (
            ("epochs", epochs), ("lr", lr), ("max_steps", max_steps), ("effective_batch", effective_batch)
        ):
            if value is not None:
                options[name] = value
        summary["out"] = str(train_prm(records, out, **options))
        typer.echo(json.dumps(summary))
        return

    from reso.reward.crm_eval import cross_validated_scores, evaluate_scores
    from reso.reward.small_crm import SmallCRM, SmallCRMConfig

    config = SmallCRMConfig(classifier=classifier, use_embeddings=embeddings, seed=seed)
    try:
        if cv_folds >= 2:
            scores = cross_validated_scores(
                records, lambda tr, te: SmallCRM(config).fit(tr).predict_records(te), folds=cv_folds
            )
            summary["cross_validation"] = _round(evaluate_scores(records, scores))
        model = SmallCRM(config).fit(records)
    except ValueError as exc:  # too few records, questions or labels of one kind only
        _fail(f"{data}: cannot train on these {len(records)} records: {exc}")
    model.save(out)
    typer.echo(json.dumps(summary))


def _scorer(spec: str) -> Any:
    from reso.reward.registry import build_scorer
    from reso.reward.small_crm import SmallCRMScorer, is_small_crm_dir

    try:
        if is_small_crm_dir(spec):
            return SmallCRMScorer(spec)
        return build_scorer(f"prm:{spec}" if Path(spec).is_dir() else spec)
    except (OSError, ValueError) as exc:  # ScorerConfigError is a ValueError
        _fail(f"--model {spec!r}: {exc}")


@app.command("eval")
def evaluate(
    data: Annotated[Path, typer.Option("--data", help="Labelled records to evaluate on.")],
    model: Annotated[
        list[str],
        typer.Option("--model", help="Model folder or scorer spec (steps, consensus, prm:DIR…); repeat to blend."),
    ],
    weight: Annotated[
        list[float] | None, typer.Option("--weight", help="Blend weight per --model (default equal).")
    ] = None,
    split: Annotated[str | None, typer.Option("--split", help="Questions to evaluate: first:N or last:N.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Score labelled records and print AUC, accuracy, Brier, per-model AUC and the selection figures."""
    import numpy as np

    from reso.reward.crm_eval import evaluate_scores, score_records

    weights = list(weight) if weight else [1.0] * len(model)
    if len(weights) != len(model) or sum(weights) <= 0 or min(weights) < 0:
        raise typer.BadParameter("--weight: one non-negative weight per --model, not all zero")
    records = _load(data, split, None)
    total = np.zeros(len(records))
    for spec, w in zip(model, weights):
        total += w * score_records(_scorer(spec), records)
    result = {"model": model if len(model) > 1 else model[0], "data": str(data), "split": split}
    if len(model) > 1:
        result["weights"] = weights
    result.update(evaluate_scores(records, total / sum(weights)))
    _print_result(result, as_json)
