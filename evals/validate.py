"""Checking items in the release format: recompute every answer from the item's DAG and report each
inconsistency.

An item is valid when its DAG (`dag`, `in_edges`, `out_edges`) agrees with itself and is acyclic; every
linked constant adds up (adj + the parents' answers = the sub-question's original constant, within the
rounding of adj as printed); the plan is a topological order of the nodes whose step texts and answers
match the nodes'; and the final answer is the product of the sub-answers within 1 % relative. Items marked
`"linked": false` (GSM8K-MAS: verbatim sub-questions) skip the linked-constant check.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

from reso.evals.datasets.numeric import parse_number
from reso.evals.datasets.raw_records import read_records
from reso.evals.datasets.release_format import (
    LINKED_CONSTANT_RE,
    answer_refs,
    node_text,
    parse_plan,
    question_value,
    split_recorded,
)
from reso.evals.synth.mas import product_of

FINAL_REL_TOL = 0.01
REQUIRED = ("dag", "node_info", "problem_text", "gt_plan", "gt_subtask", "answer_number")


@dataclass(frozen=True)
class ItemReport:
    """The validation result of one item of a file."""

    index: int
    where: str
    problems: list[str]

    @property
    def valid(self) -> bool:
        return not self.problems


def validate_item(item: object) -> list[str]:
    """Every inconsistency found in one release-format item; an empty list means the item is valid."""
    if not isinstance(item, dict):
        return [f"expected an object, got {type(item).__name__}"]
    missing = [field for field in REQUIRED if field not in item]
    if missing:
        return [f"missing field {field!r}" for field in missing]
    nodes = item["node_info"]
    if not isinstance(nodes, dict) or not nodes:
        return ["node_info: expected a non-empty object"]
    size = len(nodes)
    ids = [str(i) for i in range(size)]
    if sorted(nodes, key=_as_int) != ids:
        return [f"node_info: keys must be 0..{size - 1}, got {sorted(nodes)}"]
    errors: list[str] = []
    if "complexity" in item and item["complexity"] != size:
        errors.append(f"complexity {item['complexity']!r} but {size} nodes")
    answers: dict[int, float] = {}
    for key in ids:
        info = nodes[key]
        if not isinstance(info, dict):
            return [f"node {key}: expected an object"]
        try:
            answers[int(key)] = parse_number(info.get("answer_val"))
        except ValueError as error:
            errors.append(f"node {key}: answer_val: {error}")
        try:
            node_text(info)
        except KeyError:
            errors.append(f"node {key}: no problem_UNK / problem_text_UNK text")
    if errors:
        return errors

    parents = _check_edges(item["dag"], nodes, size, errors)
    if parents is None:
        return errors
    try:
        list(TopologicalSorter({node: set(found) for node, found in parents.items()}).static_order())
    except CycleError as error:
        return errors + [f"dag: cycle through nodes {error.args[1]}"]

    if item.get("linked", True) is not False:
        for node in range(size):
            _check_link(node, nodes[str(node)], parents[node], answers, item.get("edge_descriptions"), errors)
    else:
        for node in range(size):
            if LINKED_CONSTANT_RE.search(node_text(nodes[str(node)])):
                errors.append(f"node {node}: linked constant in an item marked \"linked\": false")
    order = _check_plan(item, nodes, parents, answers, errors)
    _check_texts(item, nodes, order, errors)
    return errors


def validate_file(path: str | Path) -> list[ItemReport]:
    """Validate every item of a `.json` list or JSON Lines file.

    Raises:
        DatasetError: When the file itself cannot be read (missing, not UTF-8, not JSON, empty).
    """
    return [ItemReport(record.index, record.where, validate_item(record.data)) for record in read_records(path)]


def _check_edges(dag: object, nodes: dict, size: int, errors: list[str]) -> dict[int, list[int]] | None:
    if not isinstance(dag, dict) or sorted(dag, key=_as_int) != [str(i) for i in range(size)]:
        errors.append(f"dag: keys must be the node ids 0..{size - 1}")
        return None
    parents: dict[int, list[int]] = {node: [] for node in range(size)}
    for key, children in dag.items():
        if not isinstance(children, list) or not all(_is_node(child, size) for child in children):
            errors.append(f"dag[{key}]: expected a list of node ids")
            return None
        if int(key) in children:
            errors.append(f"dag[{key}]: self-loop")
        if len(set(children)) != len(children):
            errors.append(f"dag[{key}]: repeated child")
        for child in children:
            parents[child].append(int(key))
    for key in map(str, range(size)):
        info = nodes[key]
        for field in ("in_edges", "out_edges"):
            edges = info.get(field)
            if not isinstance(edges, list) or not all(_is_node(edge, size) for edge in edges):
                errors.append(f"node {key}: {field}: expected a list of node ids")
                return None
        if sorted(info["out_edges"]) != sorted(dag[key]):
            errors.append(f"node {key}: out_edges {info['out_edges']} disagree with dag[{key}] {dag[key]}")
        if sorted(info["in_edges"]) != sorted(parents[int(key)]):
            errors.append(f"node {key}: in_edges {info['in_edges']} disagree with the dag's parents "
                          f"{sorted(parents[int(key)])}")
    return {node: sorted(found) for node, found in parents.items()}


def _check_link(node: int, info: dict, parents: list[int], answers: dict[int, float],
                descriptions: object, errors: list[str]) -> None:
    text = node_text(info)
    links = list(LINKED_CONSTANT_RE.finditer(text))
    if not parents:
        if links:
            errors.append(f"node {node}: a root (no in_edges) with a linked constant")
        return
    if len(links) != 1:
        errors.append(f"node {node}: has parents {parents} but {len(links)} linked constants (expected 1)")
        return
    link = links[0]
    if link.group("node") != str(node):
        errors.append(f"node {node}: linked constant is labelled UNK_{link.group('node')}")
    listed = sorted(int(part) for part in link.group("parents").split(","))
    if listed != parents:
        errors.append(f"node {node}: linked constant sums Answer{listed} but the node's parents are {parents}")
        return
    try:
        original = question_value(info)
    except (KeyError, ValueError) as error:
        errors.append(f"node {node}: question_vals: {error}")
        return
    adj_text = link.group("adj")
    decimals = len(adj_text.split(".")[1]) if "." in adj_text else 0
    # adj is printed rounded (two decimals in the release): allow half a unit of its last place.
    tolerance = 0.5 * 10.0**-decimals + 1e-9 * max(1.0, abs(original))
    recomputed = float(adj_text) + sum(answers[parent] for parent in parents)
    if abs(recomputed - original) > tolerance:
        errors.append(f"node {node}: linked constant {adj_text} + sum(Answer{parents}) = {recomputed:.6g}, "
                      f"not the original value {original:.6g}")
    if isinstance(descriptions, list) and len(descriptions) > node and isinstance(descriptions[node], str) \
            and descriptions[node].strip() and descriptions[node] not in text:
        errors.append(f"edge_descriptions[{node}] does not match the node's linked constant")


def _check_plan(item: dict, nodes: dict, parents: dict[int, list[int]], answers: dict[int, float],
                errors: list[str]) -> list[int] | None:
    """Check gt_plan, topological_order, gt_subtask and answer_number; the plan's node order if readable."""
    size = len(nodes)
    try:
        steps = parse_plan(item["gt_plan"])
    except (ValueError, SyntaxError) as error:
        errors.append(f"gt_plan: not a Python list of strings ({error})")
        return None
    if len(steps) != size + 1:
        errors.append(f"gt_plan: {len(steps)} steps for {size} nodes (expected {size + 1})")
        return None
    order: list[int] = []
    for position, step in enumerate(steps[:-1]):
        _, recorded = split_recorded(step)
        if recorded is None or not recorded.isdigit() or int(recorded) >= size:
            errors.append(f"gt_plan[{position}]: does not record its answer as Answer[i] of a node")
            return None
        order.append(int(recorded))
        if step.rstrip() != node_text(nodes[recorded]).rstrip():
            errors.append(f"gt_plan[{position}]: text differs from node {recorded}'s")
    if sorted(order) != list(range(size)):
        errors.append(f"gt_plan: steps record {order}, not each node once")
        return None
    position_of = {node: position for position, node in enumerate(order)}
    for child, found in parents.items():
        for parent in found:
            if position_of[parent] > position_of[child]:
                errors.append(f"gt_plan: node {child} comes before its parent {parent} (not topological)")
    if "topological_order" in item and item["topological_order"] != order:
        errors.append(f"topological_order {item['topological_order']} differs from gt_plan's order {order}")
    if sorted(answer_refs(steps[-1]), key=_as_int) != [str(i) for i in range(size)]:
        errors.append("gt_plan: the final step does not combine Answer[0..n-1]")

    subtask = item["gt_subtask"]
    if not isinstance(subtask, list) or len(subtask) != size + 1:
        errors.append(f"gt_subtask: expected a list of {size + 1} answers")
        return order
    try:
        values = [parse_number(value) for value in subtask]
        final = parse_number(item["answer_number"])
    except ValueError as error:
        errors.append(f"gt_subtask / answer_number: {error}")
        return order
    for position, node in enumerate(order):
        if not math.isclose(values[position], answers[node], rel_tol=1e-9, abs_tol=1e-12):
            errors.append(f"gt_subtask[{position}] = {values[position]:.6g} but node {node}'s answer_val is "
                          f"{answers[node]:.6g}")
    product = float(product_of([answers[node] for node in range(size)]))
    if not math.isclose(product, final, rel_tol=FINAL_REL_TOL, abs_tol=1e-12):
        errors.append(f"answer_number {item['answer_number']} is not the product of the sub-answers {product:.6g}")
    if not math.isclose(values[-1], final, rel_tol=FINAL_REL_TOL, abs_tol=1e-12):
        errors.append(f"gt_subtask's final {values[-1]:.6g} differs from answer_number {item['answer_number']}")
    return order


def _check_texts(item: dict, nodes: dict, order: list[int] | None, errors: list[str]) -> None:
    """The composite texts hold every node's text: in index order, and in plan order for the sorted one."""
    texts = [node_text(nodes[str(i)]).rstrip() for i in range(len(nodes))]
    sequences = {"problem_text": list(range(len(nodes)))}
    if order is not None and "problem_text_sort" in item:
        sequences["problem_text_sort"] = order
    for field, sequence in sequences.items():
        body = item.get(field)
        if not isinstance(body, str):
            errors.append(f"{field}: expected a string")
            continue
        start = 0
        for node in sequence:
            found = body.find(texts[node], start)
            if found < 0:
                errors.append(f"{field}: node {node}'s text missing or out of order")
                break
            start = found + len(texts[node])


def _is_node(value: object, size: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < size


def _as_int(key: str) -> tuple[int, str]:
    return (int(key), key) if str(key).isdigit() else (1 << 30, str(key))
