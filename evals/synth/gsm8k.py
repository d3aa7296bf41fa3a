"""GSM8K-MAS: composite questions made of k recorded GSM8K questions plus the product integration step,
split into train and test by question.

The DAG is drawn as in the paper's generator, but sub-questions stay verbatim (no linked constants) so
that recorded answers to them stay valid; the edges still make later steps see earlier answers as context.
Items are in the release format, marked `"linked": false`, so the same loader and validator apply.
"""

from __future__ import annotations

import hashlib
import random
from pathlib import Path
from typing import Literal

from reso.evals.datasets.numeric import format_number, json_number, parse_exact
from reso.evals.datasets.problem import EXACT_REL_TOL, DatasetError
from reso.evals.datasets.raw_records import read_records
from reso.evals.datasets.release_format import recorded_suffix
from reso.evals.synth.mas import assemble_item, draw_groups, product_of, random_dag

Split = Literal["train", "test"]
SPLIT_SALT = "reso-gsm8k-mas-split-v1"


def read_replay_questions(replay_path: str | Path) -> list[dict]:
    """The `{id, question, answer}` of every record of a replay (or plain GSM8K) JSONL file.

    Raises:
        DatasetError: For a malformed record (file, line, field) or a non-numeric answer.
    """
    questions = []
    for record in read_records(replay_path):
        data = record.data
        if not isinstance(data, dict):
            raise DatasetError(f"{record.where}: expected a JSON object, got {type(data).__name__}")
        for field in ("id", "question", "answer"):
            if field not in data:
                raise record.error(field, "missing")
        if not isinstance(data["question"], str) or not data["question"].strip():
            raise record.error("question", "expected a non-empty string")
        try:
            answer = parse_exact(data["answer"])
        except ValueError as error:
            raise record.error("answer", str(error)) from None
        questions.append({"id": str(data["id"]), "question": data["question"], "answer": answer})
    return questions


def split_of(question: str, test_fraction: float, salt: str = SPLIT_SALT) -> Split:
    """Which side a question falls on: a salted hash of its whitespace-normalised text, so the split does
    not depend on the sampling seed, the file's order, or the question's id."""
    key = " ".join(question.split()).encode("utf-8")
    bucket = int.from_bytes(hashlib.sha256(salt.encode("utf-8") + b"\0" + key).digest()[:8], "big") / 2**64
    return "test" if bucket < test_fraction else "train"


def split_questions(questions: list[dict], split: Split, test_fraction: float = 0.2) -> list[dict]:
    """The questions of one side of the split (in file order)."""
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must be between 0 and 1, got {test_fraction}")
    return [q for q in questions if split_of(q["question"], test_fraction) == split]


def build_gsm8k_mas(replay_path: str | Path, size: int, n: int, seed: int, split: Split = "train",
                    test_fraction: float = 0.2, *, id_prefix: str | None = None) -> list[dict]:
    """n GSM8K-MAS items of `size` verbatim GSM8K questions each, from one side of the split.

    Args:
        replay_path: A JSONL file with `id`, `question` and `answer` per line (the replay file).
        size: GSM8K questions per item (3 / 5 / 7 for Easy / Medium / Hard).
        n: Number of items.
        seed: Seed of the draw; the same arguments give the same items.
        split: "train" or "test"; the two sides share no question, whatever the seeds.
        test_fraction: Share of the questions on the test side.
        id_prefix: Item ids are `<id_prefix>-<i>` (default `gsm8k-mas<size>-<split>-s<seed>`).

    Returns:
        Release-format items; `answer_number` is the exact product of the ground-truth answers.

    Raises:
        DatasetError: For a malformed replay file. ValueError: for an impossible size, n or split.
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    questions = split_questions(read_replay_questions(replay_path), split, test_fraction)
    rng = random.Random(seed)
    groups = draw_groups(len(questions), size, n, rng)
    prefix = id_prefix or f"gsm8k-mas{size}-{split}-s{seed}"
    items = []
    for number, group in enumerate(groups):
        chosen = [questions[index] for index in group]
        order, parents = random_dag(size, rng)
        nodes = [_verbatim_node(node, question) for node, question in enumerate(chosen)]
        answers = [json_number(question["answer"]) for question in chosen]
        final = product_of([question["answer"] for question in chosen])
        items.append(assemble_item(
            nodes, order, parents, answer_number=format_number(final), final_value=json_number(final),
            subtask_answers=answers,
            extra={"id": f"{prefix}-{number}", "linked": False, "rel_tol": EXACT_REL_TOL,
                   "synth": {"kind": "gsm8k-mas", "size": size, "seed": seed, "split": split,
                             "test_fraction": test_fraction}},
            units_note=False,
        ))
    return items


def _verbatim_node(node: int, question: dict) -> dict:
    return {
        "source": "gsm8k",
        "question_id": question["id"],
        "answer_val": json_number(question["answer"]),
        "problem": question["question"],
        "problem_UNK": question["question"] + recorded_suffix(node),
    }
