"""Linked MAS composites from any file of questions with numeric answers (`reso synth mas --questions`).

The paper's linking algorithm (method.md §4, evals/synth/mas.py) over a file of plain `{id, question, answer}`
records, such as the many-model recordings of MATH Level 5 and GSM8K: each question's replaceable constant
is chosen automatically (evals/synth/constants.py), a child's constant becomes "the sum of Answer[parents] plus
adj" in place, exactly where its digits stood, and the composite closes with the product of all answers.
A question with no safe constant can only be the DAG's root, which keeps its text.

Because the constant is replaced position-exactly by `linked_constant(...)`, writing `adj` + the parents'
answers back in its place (as a replay does) gives the original question text again, character for
character. Train and test are split by question with the GSM8K-MAS hash (`split_of`).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Literal

from reso.evals.datasets.numeric import format_number, json_number, parse_exact_answer
from reso.evals.datasets.problem import EXACT_REL_TOL, DatasetError
from reso.evals.datasets.raw_records import Record, read_records
from reso.evals.datasets.release_format import edge_description, linked_constant, recorded_suffix
from reso.evals.synth.constants import Constant, choose_constant
from reso.evals.synth.gsm8k import split_of
from reso.evals.synth.mas import assemble_item, draw_groups, format_adj, product_of, random_dag

Split = Literal["train", "test", "all"]
SPLITS: tuple[Split, ...] = ("train", "test", "all")
# Larger answers are left out: a child's constant is rebuilt from its parents' answers as a float sum,
# which keeps every digit only well below 2**53.
MAX_ANSWER = 10**12
# Text that would read as a reference to another sub-question's answer inside a composite.
_ANSWER_REF = "Answer["


@dataclass(frozen=True)
class SourceQuestion:
    """A usable question of the file: exact answer, and the constant to link (None: root only)."""

    question_id: str
    text: str
    answer: Fraction
    domain: str
    constant: Constant | None


@dataclass(frozen=True)
class QuestionFile:
    """The usable questions of a file (in file order) and how many records were left out, by reason."""

    path: Path
    records: int
    questions: list[SourceQuestion]
    skipped: dict[str, int]

    def summary(self) -> str:
        """One line: what was read and what was left out."""
        left_out = sum(self.skipped.values())
        line = f"{self.path}: {self.records} questions, {len(self.questions)} usable"
        if left_out:
            reasons = ", ".join(f"{count} {reason}" for reason, count in sorted(self.skipped.items()))
            line += f", {left_out} skipped ({reasons})"
        return line


@dataclass(frozen=True)
class LinkedBuild:
    """Built items and the questions they were drawn from."""

    items: list[dict]
    source: QuestionFile
    side: int
    linkable: int

    def summary(self, split: Split) -> str:
        """One line for the user: the file's counts and the side the items were drawn from."""
        side = "all of them" if split == "all" else f"{self.side} on the {split} side"
        return f"{self.source.summary()}; {side}, {self.linkable} with a constant to link"


def read_questions(path: str | Path) -> QuestionFile:
    """The usable questions of a JSON / JSON Lines file (gzip-compressed or not) of `{id, question,
    answer}` records (other fields ignored; `type` or `dataset`, when present, names the domain).

    Skipped and counted: answers that are not exact finite numbers (`parse_exact_answer`) or beyond
    ±10**12, repeated questions (by whitespace-normalised text), and questions that contain "Answer[".

    Raises:
        DatasetError: For an unreadable file, a record that is not an object or lacks `question` or
            `answer` (naming the file, line and field), or a file with no usable question.
    """
    path = Path(path)
    records = read_records(path)
    questions: list[SourceQuestion] = []
    skipped: Counter[str] = Counter()
    seen: set[str] = set()
    for record in records:
        text, raw_answer = _fields(record)
        try:
            answer = parse_exact_answer(raw_answer)
        except ValueError:
            skipped["answers not exact numbers"] += 1
            continue
        key = " ".join(text.split())
        if abs(answer) > MAX_ANSWER:
            skipped[f"answers beyond {MAX_ANSWER:.0e}"] += 1
        elif key in seen:
            skipped["repeated questions"] += 1
        elif _ANSWER_REF in text:
            skipped["questions that mention Answer["] += 1
        else:
            seen.add(key)
            data: dict = record.data  # type: ignore[assignment]
            questions.append(SourceQuestion(
                question_id=str(data.get("id", f"{path.name}-{record.index}")),
                text=text,
                answer=answer,
                domain=str(data.get("type") or data.get("dataset") or path.name.split(".")[0]),
                constant=choose_constant(text),
            ))
    if not questions:
        raise DatasetError(f"{path}: no usable question among {len(records)} "
                           f"({', '.join(f'{count} {reason}' for reason, count in sorted(skipped.items()))})")
    return QuestionFile(path, len(records), questions, dict(skipped))


def read_question_files(paths: Sequence[str | Path]) -> QuestionFile:
    """The usable questions of several files as one source (in file order, a question repeated in a later
    file skipped and counted like a repeat within one); its path is the first file's."""
    if not paths:
        raise ValueError("give at least one file of questions")
    files = [read_questions(path) for path in paths]
    if len(files) == 1:
        return files[0]
    seen: set[str] = set()
    questions: list[SourceQuestion] = []
    skipped: Counter[str] = Counter()
    for source in files:
        skipped.update(source.skipped)
        for question in source.questions:
            key = " ".join(question.text.split())
            if key in seen:
                skipped["repeated questions"] += 1
            else:
                seen.add(key)
                questions.append(question)
    return QuestionFile(files[0].path, sum(f.records for f in files), questions, dict(skipped))


def side_of(questions: list[SourceQuestion], split: Split, test_fraction: float = 0.2) -> list[SourceQuestion]:
    """The questions of one side of the split by question text (`all`: every question)."""
    if split not in SPLITS:
        raise ValueError(f"split must be 'train', 'test' or 'all', got {split!r}")
    if split == "all":
        return list(questions)
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must be between 0 and 1, got {test_fraction}")
    return [question for question in questions if split_of(question.text, test_fraction) == split]


def build_linked_mas(path: str | Path | Sequence[str | Path], size: int, n: int, seed: int, split: Split = "all",
                     test_fraction: float = 0.2, *, id_prefix: str | None = None) -> LinkedBuild:
    """n linked composites of `size` questions each, drawn from one side of a file (or files) of questions.

    Every node but the DAG's root has parents, so it needs a question with a constant to link; the root is
    drawn from all the side's questions. Both draws deal from reshuffled decks, so questions are used
    about equally often.

    Args:
        path: The file of questions (see `read_questions`), or several read as one (`read_question_files`).
        size: Questions per item (3 / 5 / 7 for Easy / Medium / Hard).
        n: Number of items.
        seed: Seed of the draw; the same arguments give the same items.
        split: "train" or "test" (disjoint by question, whatever the seeds) or "all".
        test_fraction: Share of the questions on the test side.
        id_prefix: Item ids are `<id_prefix>-<i>` (default `<file stem>-mas<size>-<split>-s<seed>`).

    Raises:
        DatasetError: For a bad file, or too few questions (or too few with a constant) for `size`.
        ValueError: For an impossible size, n, split or test fraction.
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    if size < 1:
        raise ValueError(f"size must be >= 1, got {size}")
    source = read_question_files([path] if isinstance(path, str | Path) else path)
    pool = side_of(source.questions, split, test_fraction)
    linkable = [index for index, question in enumerate(pool) if question.constant is not None]
    where = f"{source.path} ({split} side)"
    if len(pool) < size:
        raise DatasetError(f"{where}: {len(pool)} usable questions, fewer than the {size} an item needs")
    if len(linkable) < size - 1:
        raise DatasetError(f"{where}: only {len(linkable)} of {len(pool)} questions have a safe integer "
                           f"constant to link; an item of {size} needs {size - 1}")
    rng = random.Random(seed)
    child_groups = draw_groups(len(linkable), size - 1, n, rng) if size > 1 else [[] for _ in range(n)]
    root_deck: list[int] = []
    prefix = id_prefix or f"{source.path.name.split('.')[0]}-mas{size}-{split}-s{seed}"
    synth = {"kind": "mas-questions", "size": size, "seed": seed, "split": split, "source": source.path.name,
             "test_fraction": None if split == "all" else test_fraction}
    items = []
    for number, group in enumerate(child_groups):
        children = [linkable[index] for index in group]
        root = _deal(root_deck, len(pool), set(children), rng)
        order, parents = random_dag(size, rng)
        chosen = dict(zip(order, [pool[root], *(pool[index] for index in children)], strict=True))
        questions = [chosen[node] for node in range(size)]
        nodes = [_node(node, questions[node], parents[node], questions) for node in range(size)]
        final = product_of([question.answer for question in questions])
        items.append(assemble_item(
            nodes, order, parents, answer_number=format_number(final), final_value=json_number(final),
            subtask_answers=[json_number(question.answer) for question in questions],
            extra={"id": f"{prefix}-{number}", "linked": True, "rel_tol": EXACT_REL_TOL, "synth": dict(synth)},
            units_note=False,
        ))
    return LinkedBuild(items, source, len(pool), len(linkable))


def _fields(record: Record) -> tuple[str, object]:
    data = record.data
    if not isinstance(data, dict):
        raise DatasetError(f"{record.where}: expected a JSON object, got {type(data).__name__}")
    if "question" not in data and ("problem_UNK" in data or "problem_text_UNK" in data):
        raise record.error("question", "missing (this is a sub-question pool with UNK(...) markers, "
                                       "not a file of questions)")
    for field in ("question", "answer"):
        if field not in data:
            raise record.error(field, "missing")
    if not isinstance(data["question"], str) or not data["question"].strip():
        raise record.error("question", f"expected a non-empty string, got {type(data['question']).__name__}")
    return data["question"], data["answer"]


def _deal(deck: list[int], count: int, exclude: set[int], rng: random.Random) -> int:
    """The top card of a reshuffled deck of 0…count-1 that is not in `exclude` (skipped cards stay)."""
    while True:
        for position in range(len(deck) - 1, -1, -1):
            if deck[position] not in exclude:
                return deck.pop(position)
        fresh = list(range(count))
        rng.shuffle(fresh)
        deck[:0] = fresh


def _node(node: int, question: SourceQuestion, parents: list[int], questions: list[SourceQuestion]) -> dict:
    text = question.text
    info: dict = {"source": question.domain, "question_id": question.question_id,
                  "answer_val": json_number(question.answer), "problem": question.text}
    constant = question.constant
    if parents:
        if constant is None:  # the draw gives parents only to questions with a constant
            raise ValueError(f"question {question.question_id!r} has no constant to link")
        adj = format_adj(float(constant.value - sum(questions[parent].answer for parent in parents)))
        text = text[:constant.start] + linked_constant(node, parents, adj) + text[constant.end:]
        info["question_vals"] = [constant.value]
        info["edge_description"] = edge_description(parents, adj)
    elif constant is not None:
        info["question_vals"] = constant.value
    info["problem_UNK"] = text + recorded_suffix(node)
    return info
