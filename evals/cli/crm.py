"""`reso crm …`: train and evaluate Collaborative Reward Models.

`train` builds a small CRM (scikit-learn, CPU, minutes; every setting chosen by cross-validation grouped
by question on the training questions) or fine-tunes a PRM checkpoint with LoRA from labelled records;
`eval` scores labelled records with a trained model or any scorer spec and prints the figures as one JSON
object. `--data` takes several files (`A,B`), plain or `.gz`. Splits select whole questions (`first:N`,
`last:N`, or `train` / `test` by a salted hash of the question text), so train and test never share a
question. Heavy libraries are imported inside the commands to keep `reso --help` fast.
"""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from reso.evals.cli.errors import fail
from reso.evals.cli.paths import out_file, out_folder

app = typer.Typer(help="Train and evaluate Collaborative Reward Models.", no_args_is_help=True)


class CRMKind(str, Enum):
    small = "small"
    prm = "prm"


def _load(data: str, split: str | None, limit_questions: int | None) -> list[Any]:
    from reso.reward.labelled_records import RecordFormatError, load_record_files, split_by_question

    try:
        records = load_record_files(data)
        if limit_questions is not None:
            records = split_by_question(records, f"first:{limit_questions}")
        records = split_by_question(records, split)
    except (RecordFormatError, ValueError) as exc:
        fail(str(exc))
    if not records:
        fail(f"{data}: no records selected (split {split!r})")
    return records


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


DATA_HELP = "Records: paper JSON/JSONL, step-labelled, or the many-model replay JSONL; .gz too; A,B for several."
SPLIT_HELP = "Questions to use: train / test (salted hash; test:0.3 sets the share), first:N or last:N."
EVERY_QUESTION = "every question"


@app.command()
def train(
    data: Annotated[str, typer.Option("--data", help=DATA_HELP)],
    out: Annotated[Path, typer.Option("--out", help="Folder to write the trained model to.")],
    kind: Annotated[CRMKind, typer.Option("--kind", help="small (scikit-learn) or prm (LoRA).")] = CRMKind.small,
    base: Annotated[str | None, typer.Option("--base", help="PRM base checkpoint (kind prm).",
                                             show_default="none: --kind prm needs one")] = None,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    split: Annotated[str | None, typer.Option("--split", help=SPLIT_HELP, show_default=EVERY_QUESTION)] = None,
    limit_questions: Annotated[
        int | None, typer.Option("--limit-questions", help="Use only the first N questions.",
                                 show_default=EVERY_QUESTION)
    ] = None,
    tune: Annotated[
        bool, typer.Option("--tune/--no-tune", help="small: choose every setting by grouped cross-validation.")
    ] = True,
    question_embedding: Annotated[
        bool, typer.Option("--question-embedding", help="small: add MiniLM embeddings of the question.")
    ] = False,
    answer_embedding: Annotated[
        bool, typer.Option("--answer-embedding", help="small: add MiniLM embeddings of the answer (slow on CPU).")
    ] = False,
    neural: Annotated[
        bool, typer.Option("--neural", help="small: stack a small neural verifier (a cross-encoder) trained here.")
    ] = False,
    neural_setting: Annotated[
        list[str] | None,
        typer.Option("--neural-setting", help="small: KEY=VALUE of the verifier's config (hidden=256, layers=4, "
                                              "max_train=none, device=cuda …); repeat.",
                     show_default="the verifier's own settings"),
    ] = None,
    cv_folds: Annotated[
        int, typer.Option("--cv-folds", help="small: grouped folds for tuning and stacking (under 2: neither).")
    ] = 5,
    epochs: Annotated[float | None, typer.Option("--epochs", help="prm: training epochs.",
                                                 show_default="5")] = None,
    lr: Annotated[float | None, typer.Option("--lr", help="prm: learning rate.", show_default="0.0001")] = None,
    max_steps: Annotated[int | None, typer.Option("--max-steps", help="prm: stop after N steps.",
                                                  show_default="none: --epochs decides")] = None,
    effective_batch: Annotated[
        int | None, typer.Option("--effective-batch", help="prm: records per optimiser step.", show_default="128")
    ] = None,
) -> None:
    """Train a CRM on labelled records and save it to OUT; prints a JSON summary."""
    out_folder("--out", out)
    records = _load(data, split, limit_questions)
    from reso.reward.labelled_records import question_order

    summary: dict[str, Any] = {
        "kind": kind.value,
        "data": data,
        "split": split,
        "n": len(records),
        "n_questions": len(question_order(records)),
        "out": str(out),
    }
    if kind is CRMKind.prm:
        if base is None:
            fail("--kind prm needs --base CHECKPOINT")
        from reso.reward.training.prm_training import train_prm

        options: dict[str, Any] = {"base": base, "seed": seed}
        for name, value in (
            ("epochs", epochs), ("lr", lr), ("max_steps", max_steps), ("effective_batch", effective_batch)
        ):
            if value is not None:
                options[name] = value
        summary["out"] = str(train_prm(records, out, **options))
        typer.echo(json.dumps(summary))
        return

    from reso.reward.small_crm import SmallCRMConfig
    from reso.reward.training.small_crm_fit import fit_small_crm

    config = SmallCRMConfig(question_embedding=question_embedding, answer_embedding=answer_embedding,
                            neural=neural, neural_params=_neural_settings(neural_setting or []), folds=cv_folds,
                            seed=seed)
    try:
        model = fit_small_crm(records, config, tune=tune)
    except ValueError as exc:  # too few records, questions or labels of one kind only
        fail(f"{data}: cannot train on these {len(records)} records: {exc}")
    model.save(out)
    summary["n_models"] = len(model.model_priors)
    summary["settings"] = {"answer_model": config.answer_params, "group_model": config.group_params,
                           **({"embeddings": config.embedding_params} if config.embedding_params else {})}
    summary["cross_validation"] = {
        stage: min(table, key=lambda row: row["log_loss"]) | {"candidates": len(table)}
        for stage, table in model.selection.items() if table
    } or None
    typer.echo(json.dumps(summary))


def _neural_settings(pairs: list[str]) -> dict[str, Any]:
    """`KEY=VALUE` pairs as NeuralVerifierConfig settings, each value read as its field's type."""
    from dataclasses import fields

    from reso.reward.neural_verifier import NeuralVerifierConfig

    known = {f.name: f for f in fields(NeuralVerifierConfig)}
    settings: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or key.strip() not in known:
            fail(f"--neural-setting {pair!r}: expected KEY=VALUE with KEY one of {', '.join(known)}")
        key, value = key.strip(), value.strip()
        default: Any = known[key].default  # every field of NeuralVerifierConfig has a plain default
        if value.lower() in ("none", "null"):
            settings[key] = None
            continue
        try:
            settings[key] = type(default)(value) if default is not None and not isinstance(default, str) else value
        except ValueError:
            fail(f"--neural-setting {pair!r}: {value!r} is not a {type(default).__name__}")
    return settings


def _scorer(spec: str) -> Any:
    from reso.reward.registry import build_scorer
    from reso.reward.small_crm import SmallCRMScorer, is_small_crm_dir

    try:
        if is_small_crm_dir(spec):
            return SmallCRMScorer(spec)
        return build_scorer(f"prm:{spec}" if Path(spec).is_dir() else spec)
    except (OSError, ValueError) as exc:  # ScorerConfigError is a ValueError
        fail(f"--model {spec!r}: {exc}")


def _training_record(scorers: list[Any], all_records: list[Any], chosen: list[Any]) -> tuple[Any, str | None]:
    """Each model's share right on training questions, for the best fixed model: the small CRM's own
    training record, else the questions of the data outside the evaluated split, else none."""
    from reso.reward.labelled_records import question_key
    from reso.reward.small_crm import SmallCRMScorer

    crm = next((s for s in scorers if isinstance(s, SmallCRMScorer)), None)
    if crm is not None and crm.model.model_priors:
        return crm.model.model_priors, "the CRM's training records"
    kept = {question_key(r) for r in chosen}
    per_model: dict[str, list[int]] = {}
    for record in all_records:
        if record.model and question_key(record) not in kept:
            per_model.setdefault(record.model, []).append(record.label)
    if not per_model:
        return None, None
    return {m: sum(v) / len(v) for m, v in per_model.items()}, "the questions outside the evaluated split"


@app.command("eval")
def evaluate(
    data: Annotated[str, typer.Option("--data", help=DATA_HELP)],
    model: Annotated[
        list[str],
        typer.Option("--model", help="Model folder or scorer spec (steps, consensus, prm:DIR…); repeat to blend."),
    ],
    weight: Annotated[
        list[float] | None, typer.Option("--weight", help="Blend weight per --model (default equal).")
    ] = None,
    split: Annotated[str | None, typer.Option("--split", help=SPLIT_HELP, show_default=EVERY_QUESTION)] = None,
    candidates: Annotated[
        int | None, typer.Option("--candidates", min=1, help="Also choose among K recorded answers per question.",
                                 show_default="none: no choosing")
    ] = None,
    draws: Annotated[int, typer.Option("--draws", min=1, help="Random slates of K per question.")] = 10,
    bootstrap: Annotated[
        int, typer.Option("--bootstrap", min=0, help="Resamples of questions for the intervals (0: none).")
    ] = 200,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the slates, ties and resamples.")] = 0,
    alone: Annotated[
        bool, typer.Option("--alone", help="Score every answer on its own, without the other answers to its question.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Score labelled records: AUC, accuracy, Brier, per-model AUC, ProcessBench F1, picks among K answers."""
    import numpy as np

    from reso.reward.base import ScorerFailedError
    from reso.reward.training.crm_candidates import compare_picks, draw_slates
    from reso.reward.training.crm_eval import (
        bootstrap_intervals,
        evaluate_scores,
        score_groups,
        score_records,
        step_predictions,
    )

    weights = list(weight) if weight else [1.0] * len(model)
    if len(weights) != len(model) or sum(weights) <= 0 or min(weights) < 0:
        raise typer.BadParameter("--weight: one non-negative weight per --model, not all zero")
    all_records = _load(data, None, None)
    records = _load(data, split, None) if split else all_records
    scorers = [_scorer(spec) for spec in model]
    total = np.zeros(len(records))
    try:
        for scorer, w in zip(scorers, weights):
            total += w * (score_groups(scorer, records, [[i] for i in range(len(records))]) if alone
                          else score_records(scorer, records))
    except ScorerFailedError as exc:
        fail(str(exc), code=1)
    scores = total / sum(weights)
    first_errors = step_predictions(scorers[0], records) if len(scorers) == 1 else None
    result: dict[str, Any] = {"model": model if len(model) > 1 else model[0], "data": data, "split": split,
                              "alone": alone}
    if len(model) > 1:
        result["weights"] = weights
    result.update(evaluate_scores(records, scores, first_errors))
    if bootstrap:
        result["intervals"] = bootstrap_intervals(records, scores, resamples=bootstrap, seed=seed)
    if candidates is not None:
        slates = draw_slates(records, candidates, draws, seed=seed)
        if not slates:
            fail(f"{data}: no question has {candidates} recorded answers for --candidates {candidates}")
        slate_scores = sum(w * score_groups(s, records, slates) for s, w in zip(scorers, weights)) / sum(weights)
        record_of, source = _training_record(scorers, all_records, records)
        result["candidates"] = compare_picks(records, slates, np.asarray(slate_scores), record_of, seed=seed,
                                             resamples=bootstrap)
        result["candidates"]["best_fixed_from"] = source
    _print_result(result, as_json)


@app.command()
def ablate(
    data: Annotated[str, typer.Option("--data", help="Record files, one per problem set: A,B.")],
    variants: Annotated[
        str, typer.Option("--variants", help="Comma-separated: default, no_prior, no_group, question_embedding, "
                                             "answer_embedding, neural.")
    ] = "default,no_prior,no_group",
    model_folds: Annotated[int, typer.Option("--model-folds", min=2, help="Folds of held-out models.")] = 2,
    axes: Annotated[
        str, typer.Option("--axes", help="Comma-separated: questions, models, problem_sets.")
    ] = "questions,models,problem_sets",
    candidates: Annotated[int, typer.Option("--candidates", min=1, help="K of the pick among K answers.")] = 3,
    draws: Annotated[int, typer.Option("--draws", min=1, help="Random slates of K per question.")] = 5,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """What each part of the small CRM adds, on held-out questions, held-out models and held-out problem sets."""
    from reso.reward.training.crm_ablation import ablate as run_ablation

    files = {Path(name.strip()).name.split(".")[0]: _load(name.strip(), None, None)
             for name in data.split(",") if name.strip()}
    try:
        result = run_ablation(files, [v.strip() for v in variants.split(",") if v.strip()],
                              model_fold_count=model_folds, axes=[a.strip() for a in axes.split(",") if a.strip()],
                              k=candidates, draws=draws, seed=seed,
                              log=lambda line: typer.echo(line, err=True))
    except ValueError as exc:
        fail(str(exc))
    _print_result(result, as_json)


@app.command("as-steps")
def as_steps(
    data: Annotated[str, typer.Option("--data", help="Labelled records (A,B for several; .gz too).")],
    out: Annotated[Path, typer.Option("--out", help="JSONL file to write, in ProcessBench's layout.")],
    split: Annotated[str | None, typer.Option("--split", help="Questions to use, as for eval.",
                                              show_default=EVERY_QUESTION)] = None,
    named: Annotated[bool, typer.Option("--named/--unnamed", help="Keep the model's name as `generator`, or "
                                        "write every answer as an unknown model's.")] = True,
) -> None:
    """Write labelled answers in ProcessBench's layout (steps ending in a boxed answer), so `reso crm eval`
    can measure a CRM on that layout with the same answers."""
    from reso.reward.training.step_layout import as_step_records

    out_file("--out", out)
    records = _load(data, split, None)
    rows = as_step_records(records, named=named)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as file:
        file.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    typer.echo(json.dumps({"records": len(records), "written": len(rows), "out": str(out)}))
