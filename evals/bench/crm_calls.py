"""`reso bench crm-calls`: what one engine CRM call costs, flattened trees against scikit-learn, side by side.

The engine scores one sub-question's two or three answers per call. The small CRM is fitted with its
default settings (the size `reso demo` trains: 300 answer-model trees, 200 group-model trees) on the
recorded MATH level-5 answers to the first `questions` questions; the calls score slates of three recorded
answers to the next questions. Both sides score the same slates, with every answer's features already
read (the engine reads each answer once, then rescoring it is free), alternating round by round so both
see the same machine load: `flat` is the shipped path (`reward/flat_trees.py`), `sklearn` the same model
predicted by scikit-learn (`flat_batch = 0`). The report gives the median milliseconds per call of each,
their ratio, and the largest difference between the two sides' probabilities (zero up to rounding).
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

SLATE = 3


def _slates(records: Sequence[Any], count: int, seed: int) -> list[list[Any]]:
    """`count` random slates of SLATE answers, each to one question."""
    from reso.reward.labelled_records import question_key

    by_question: dict[str, list[Any]] = {}
    for record in records:
        by_question.setdefault(question_key(record), []).append(record)
    pools = [answers for answers in by_question.values() if len(answers) >= SLATE]
    rng = random.Random(seed)
    return [rng.sample(rng.choice(pools), SLATE) for _ in range(count)]


def run_bench(*, questions: int = 120, calls: int = 300, rounds: int = 5, seed: int = 0,
              progress: Callable[[str], None] = lambda line: None) -> dict[str, Any]:
    """Fit the CRM, then time `calls` calls per side in each of `rounds` alternating rounds."""
    from reso.agents.defaults import data_dir
    from reso.reward.labelled_records import load_records, split_by_question
    from reso.reward.small_crm import candidates_from_records
    from reso.reward.training.small_crm_fit import fit_small_crm

    records = load_records(data_dir() / "math_l5_dev.jsonl.gz")
    train = split_by_question(records, f"first:{questions}")
    held_out = split_by_question(records, f"last:{questions}")
    progress(f"fitting the small CRM on {len(train)} recorded answers to {questions} questions")
    crm = fit_small_crm(train)
    slates = [candidates_from_records(slate) for slate in _slates(held_out, calls, seed)]

    def score_all(flat_batch: int) -> tuple[list[float], np.ndarray]:
        crm.flat_batch = flat_batch
        times, scores = [], []
        for slate in slates:
            start = time.perf_counter()
            scores.append(crm.predict_candidates(slate))
            times.append(time.perf_counter() - start)
        return times, np.concatenate(scores)

    sides = {"flat": crm.flat_batch, "sklearn": 0}
    score_all(crm.flat_batch)  # reads every answer's features once, outside the timed rounds
    per_side: dict[str, list[float]] = {name: [] for name in sides}
    values: dict[str, np.ndarray] = {}
    for round_number in range(rounds):
        for name, flat_batch in sides.items():
            times, values[name] = score_all(flat_batch)
            per_side[name].append(statistics.median(times) * 1000)
        progress(f"round {round_number + 1}/{rounds}: flat {per_side['flat'][-1]:.2f} ms, "
                 f"sklearn {per_side['sklearn'][-1]:.2f} ms a call")
    flat_ms, sklearn_ms = statistics.median(per_side["flat"]), statistics.median(per_side["sklearn"])
    return {
        "answers_trained_on": len(train), "calls": calls, "slate": SLATE, "rounds": rounds,
        "trees": {"answer": crm.config.answer_params["max_iter"], "group": crm.config.group_params["max_iter"]},
        "flat_ms_per_call": round(flat_ms, 3), "sklearn_ms_per_call": round(sklearn_ms, 3),
        "speedup": round(sklearn_ms / flat_ms, 2),
        "max_abs_difference": float(np.abs(values["flat"] - values["sklearn"]).max()),
    }


def render_table(report: dict[str, Any]) -> Any:
    from rich.table import Table

    table = Table(title=f"CRM call: {report['slate']} answers, {report['calls']} calls × {report['rounds']} rounds")
    for column in ("path", "ms per call (median)"):
        table.add_column(column)
    table.add_row("flattened trees", f"{report['flat_ms_per_call']:.2f}")
    table.add_row("scikit-learn", f"{report['sklearn_ms_per_call']:.2f}")
    table.add_row("speed-up", f"{report['speedup']:.1f}×")
    return table
