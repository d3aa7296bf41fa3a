"""Benchmark synthesis as in the ReSo paper (method.md §4): composite questions whose sub-questions are
linked through a random DAG, emitted in the release's item format.

For an item of `size` sub-questions: sample them from a pool; shuffle them into a topological order; give
every node after the first one random earlier parent, then try 0…size-1 extra forward edges (a repeat
is dropped, which matches the edge counts of the released files); replace each child's marked constant by
"the sum of Answer[parents] plus adj" with `adj = original − sum(parent answers)`; close with the
product of all sub-answers.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from reso.evals.datasets.numeric import format_number, parse_exact, parse_number
from reso.evals.datasets.problem import DatasetError
from reso.evals.datasets.release_format import (
    INTEGRATION_HEADER,
    POOL_MARKER_RE,
    PREAMBLE,
    edge_description,
    final_instruction,
    linked_constant,
    recorded_suffix,
)


@dataclass(frozen=True)
class PoolQuestion:
    """A sub-question of a pool, whatever the pool's spelling (MATH: `problem`, `problem_UNK`, `type`,
    `question_id`; SciBench: `problem_text`, `problem_text_UNK`, `unit`, `source`, `problemid`)."""

    question_id: str
    text: str
    text_unk: str
    value: float
    answer: float
    domain: str
    unit: str | None
    text_key: str


def read_pool(items: Sequence[object], *, where: str = "pool") -> list[PoolQuestion]:
    """A sub-question pool in the release's format as `PoolQuestion`s.

    Raises:
        DatasetError: For an item without a text, exactly one marked constant, a numeric `q_vals` or a
            numeric `answer_number`, naming the item index and field.
    """
    questions = []
    for index, item in enumerate(items):
        def fail(field: str, message: str, index: int = index) -> DatasetError:
            return DatasetError(f"{where}: item {index}: field '{field}': {message}")

        if not isinstance(item, dict):
            raise DatasetError(f"{where}: item {index}: expected an object, got {type(item).__name__}")
        text_key = "problem" if "problem_UNK" in item else "problem_text"
        unk_key = f"{text_key}_UNK"
        if unk_key not in item and "question" in item:
            raise fail("problem_UNK", "missing, and no problem_text_UNK either (this is a file of plain "
                                      "questions, not a sub-question pool with UNK(...) markers)")
        for key in (text_key, unk_key, "q_vals", "answer_number"):
            if key not in item:
                raise fail(key, "missing")
        if not isinstance(item[unk_key], str) or len(POOL_MARKER_RE.findall(item[unk_key])) != 1:
            raise fail(unk_key, "expected a string with exactly one marked constant UNK(...)")
        try:
            value = parse_number(item["q_vals"])
        except ValueError as error:
            raise fail("q_vals", str(error)) from None
        try:
            answer = parse_number(item["answer_number"])
        except ValueError as error:
            raise fail("answer_number", str(error)) from None
        unit = item.get("unit") if isinstance(item.get("unit"), str) else None
        questions.append(PoolQuestion(
            question_id=str(item.get("question_id", item.get("problemid", index))),
            text=str(item[text_key]),
            text_unk=item[unk_key],
            value=value,
            answer=answer,
            domain=str(item.get("type", item.get("source", ""))),
            unit=unit,
            text_key=text_key,
        ))
    return questions


def random_dag(size: int, rng: random.Random) -> tuple[list[int], dict[int, list[int]]]:
    """A random connected DAG over nodes 0…size-1 drawn the paper's way.

    Returns:
        The topological order (the shuffle) and each node's sorted parents.
    """
    order = list(range(size))
    rng.shuffle(order)
    parents: dict[int, set[int]] = {node: set() for node in order}
    for position in range(1, size):
        parents[order[position]].add(order[rng.randrange(position)])
    if size > 1:
        for _ in range(rng.randint(0, size - 1)):
            first, second = sorted(rng.sample(range(size), 2))
            parents[order[second]].add(order[first])
    return order, {node: sorted(found) for node, found in parents.items()}


def draw_groups(count: int, size: int, n: int, rng: random.Random) -> list[list[int]]:
    """n groups of `size` distinct indices into a pool of `count`, dealt from reshuffled decks so that
    every pool item is used about equally often."""
    if size < 1 or size > count:
        raise ValueError(f"size must be between 1 and the pool size {count}, got {size}")
    deck: list[int] = []
    groups = []
    for _ in range(n):
        group: list[int] = []
        while len(group) < size:
            if not deck:
                deck = list(range(count))
                rng.shuffle(deck)
            # A card already in this group goes back under the deck (only happens across a reshuffle).
            card = deck.pop()
            if card in group:
                deck.insert(0, card)
                continue
            group.append(card)
        groups.append(group)
    return groups


def format_adj(adj: float) -> str:
    """The adjustment as the release prints it, two decimals ("-218.00"), with more decimals only when two
    would change the child's constant (the release rounds; keeping it exact keeps the child's answer)."""
    for places in range(2, 13):
        text = f"{adj:.{places}f}"
        if math.isclose(float(text), adj, rel_tol=1e-12, abs_tol=1e-12):
            return text
    return f"{adj:.12f}"


def product_of(values: Sequence[float | int | Fraction]) -> Fraction:
    """The exact product of the sub-answers (floats are read through their shortest decimal form)."""
    result = Fraction(1)
    for value in values:
        result *= parse_exact(value)
    return result


def assemble_item(nodes: list[dict], order: list[int], parents: dict[int, list[int]], *,
                  answer_number: str, final_value: float, subtask_answers: list, extra: dict,
                  units_note: bool) -> dict:
    """A release-format item from finished `node_info` entries (each with its text under `problem_UNK` or
    `problem_text_UNK`, and optionally an `edge_description` that moves to the item's list) and the DAG."""
    size = len(nodes)
    children = {node: sorted(child for child in range(size) if node in parents[child]) for node in range(size)}
    for node, info in enumerate(nodes):
        info["in_edges"] = list(parents[node])
        info["out_edges"] = children[node]
    descriptions = [info.pop("edge_description", " ") for info in nodes]
    texts: list[str] = [info["problem_UNK"] if "problem_UNK" in info else info["problem_text_UNK"]
                        for info in nodes]
    final = final_instruction(size)
    final_text = final_instruction(size, units_note=units_note)
    closing = f"\n\n{INTEGRATION_HEADER}{final_text}"
    return {
        **extra,
        "source": "".join(f"{info['source']} " for info in nodes),
        "Q_ID": [info["question_id"] for info in nodes],
        "complexity": size,
        "dag": {str(node): children[node] for node in range(size)},
        "topological_order": list(order),
        "node_info": {str(node): info for node, info in enumerate(nodes)},
        "edge_descriptions": descriptions,
        "problem_text": PREAMBLE + "\n\n".join(texts) + closing,
        "problem_text_sort": PREAMBLE + "\n\n".join(texts[node] for node in order) + closing,
        "answer_number": answer_number,
        "gt_plan": repr([texts[node] + "\n" for node in order] + [final]),
        "gt_subtask": [subtask_answers[node] for node in order] + [final_value],
        "unit": "",
    }


def synthesize_mas(pool_items: Sequence[object], size: int, n: int, seed: int, *,
                   id_prefix: str | None = None, where: str = "pool") -> list[dict]:
    """n composite items of `size` linked sub-questions, in the release's item format.

    Args:
        pool_items: The pool's items (`sub_questions/math_test.json` or `scibench.json` style).
        size: Sub-questions per item (3 / 5 / 7 for Easy / Medium / Hard; any size up to the pool's).
        n: Number of items.
        seed: Seed of the whole draw; the same arguments give the same items.
        id_prefix: Item ids are `<id_prefix>-<i>` (default `mas<size>-s<seed>`).
        where: How errors name the pool (its file).

    Raises:
        DatasetError: For a malformed pool item. ValueError: for an impossible size or n.
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    pool = read_pool(pool_items, where=where)
    rng = random.Random(seed)
    groups = draw_groups(len(pool), size, n, rng)
    prefix = id_prefix or f"mas{size}-s{seed}"
    items = []
    for number, group in enumerate(groups):
        questions = [pool[index] for index in group]
        order, parents = random_dag(size, rng)
        nodes = [_linked_node(node, question, parents[node], questions) for node, question in enumerate(questions)]
        answers = [question.answer for question in questions]
        final = float(product_of(answers))
        units_note = any(question.unit is not None for question in questions)
        items.append(assemble_item(
            nodes, order, parents, answer_number=repr(final), final_value=final, subtask_answers=answers,
            extra={"id": f"{prefix}-{number}", "synth": {"kind": "mas", "size": size, "seed": seed}},
            units_note=units_note,
        ))
    return items


def _linked_node(node: int, question: PoolQuestion, parents: list[int], questions: list[PoolQuestion]) -> dict:
    if parents:
        adj = question.value - sum(questions[parent].answer for parent in parents)
        replacement = linked_constant(node, parents, format_adj(adj))
        description = edge_description(parents, format_adj(adj))
        value: float | list[float] = [question.value]
    else:
        replacement, description, value = format_number(question.value), " ", question.value
    text = POOL_MARKER_RE.sub(lambda _match: replacement, question.text_unk, count=1) + recorded_suffix(node)
    info: dict = {
        "source": question.domain,
        "question_id": question.question_id,
        "question_vals": value,
        "answer_val": question.answer,
        question.text_key: question.text,
        f"{question.text_key}_UNK": text,
        "edge_description": description,
    }
    if question.unit is not None:
        info["unit"] = question.unit
    return info
