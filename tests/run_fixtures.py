"""Hand-made run folders in the format `reso eval` writes (results.jsonl, summary.json), for report and
comparison tests that need no engine: every item is a two-sub-question DAG joined by an integration step."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reso.evals.methods import ORACLE_LABEL
from reso.evals.reports.stats import wilson_interval

SETTINGS = {"pool": "", "k": 2, "answer_value_usd": 0.05, "selection": "reputation", "scorer": "consensus", "mode": "test",
            "db": "dadb.sqlite", "seed": 0}


def _candidate(agent: str, value: str | None, score: float, cost: float, error: str | None = None) -> dict:
    return {"agent_id": agent, "model": f"replay:fixture#{agent}", "role": "Algebra", "value": value,
            "score": score, "score_reason": None, "reward": None, "domain": "arithmetic",
            "selection": {"similarity": 0.41, "reputation": 0.5, "cost_penalty": 0.2, "exploration": 0.1,
                          "score": 0.3},
            "input_tokens": 100, "output_tokens": 20, "cost_usd": cost, "latency_s": 0.1, "error": error,
            "retries": 0}


def result_row(item_id: str, correct: bool, cost: float = 0.01, *, answer: str | None = None,
               agent: str = "model-a") -> dict[str, Any]:
    """One results.jsonl line: steps `a` and `b` feed `final`; the kept answer is `answer` (default the
    reference when `correct`, else a wrong number)."""
    reference = "42"
    answer = answer if answer is not None else (reference if correct else "41")
    steps = [
        {"id": "a", "agent": agent, "value": "6", "status": "done", "depends_on": [], "reference": "6",
         "correct": True, "domain": "gsm8k",
         "candidates": [_candidate(agent, "6", 1.0, cost / 2), _candidate("model-b", "5", 0.0, 0.0)]},
        {"id": "b", "agent": "model-b", "value": "7" if correct else "8", "status": "done", "depends_on": [],
         "reference": "7", "correct": correct, "domain": "gsm8k",
         "candidates": [_candidate("model-b", "7" if correct else "8", 0.5, cost / 2)]},
        {"id": "final", "agent": "tool/calculator", "value": answer, "status": "done", "depends_on": ["a", "b"],
         "reference": reference, "correct": correct, "domain": None,
         "candidates": [_candidate("tool/calculator", answer, 1.0, 0.0),
                        _candidate("model-a", None, 0.0, 0.0, error="NoRecordingError: no recording")]},
    ]
    return {"id": item_id, "reference": reference, "answer": answer, "correct": correct, "status": "done",
            "usage": {"calls": 4, "input_tokens": 400, "output_tokens": 80, "cost_usd": cost, "total_tokens": 480},
            "latency_s": 0.5, "steps": steps, "notes": []}


def write_run(folder: Path, rows: Sequence[dict[str, Any]], *, method: str = "reso", dataset: str = "fixture",
              mode: str = "test", method_label: str | None = None, **settings: Any) -> Path:
    """Write `folder/results.jsonl` and a matching `folder/summary.json`; returns the folder. The method is
    labelled `method_label`, by default as the runner labels the methods that fixtures use."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    n = len(rows)
    correct = sum(1 for row in rows if row["correct"])
    cost = sum(row["usage"]["cost_usd"] for row in rows)
    tokens = sum(row["usage"]["total_tokens"] for row in rows)
    summary = {
        "dataset": dataset, "method": method, "method_label": method_label or (ORACLE_LABEL if method == "oracle" else method),
        "mode": mode, "n": n, "correct": correct,
        "accuracy": correct / n if n else 0.0, "accuracy_ci95": wilson_interval(correct, n),
        "total_tokens": tokens, "tokens_per_item": tokens / n if n else 0.0, "cost_usd": cost,
        "cost_per_item_usd": cost / n if n else 0.0, "latency_s": 0.5, "wall_s": 1.0, "failed_items": 0,
        "stopped": None, "items": n, "items_left": 0, "seed": 0, "settings": {**SETTINGS, **settings},
        "command": ["reso", "eval", "--method", method], "versions": {"python": "3"},
    }
    (folder / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    return folder


def pattern_run(folder: Path, pattern: str, cost: float = 0.01, **kwargs: Any) -> Path:
    """A run whose item i is right where `pattern[i]` is '1' (items `q0`, `q1`, ...)."""
    rows = [result_row(f"q{i}", flag == "1", cost) for i, flag in enumerate(pattern)]
    return write_run(folder, rows, **kwargs)
