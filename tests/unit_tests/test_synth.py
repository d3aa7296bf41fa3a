"""The paper's benchmark synthesiser: pools, random DAGs, linked constants, determinism, validity."""

from __future__ import annotations

import json
import random
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest

from reso.evals.datasets import DatasetError
from reso.evals.datasets.loaders import release_problem
from reso.evals.datasets.raw_records import Record
from reso.evals.datasets.release_format import LINKED_CONSTANT_RE, node_text, parse_plan
from reso.evals.synth.mas import draw_groups, format_adj, random_dag, read_pool, synthesize_mas
from reso.evals.validate import validate_item

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "datasets"


def _pool(name: str) -> list[dict]:
    return json.loads((FIXTURES / f"pool_{name}_sample.json").read_text(encoding="utf-8"))


def _connected(size: int, dag: dict[str, list[int]]) -> bool:
    neighbours = {node: set() for node in range(size)}
    for parent, children in dag.items():
        for child in children:
            neighbours[int(parent)].add(child)
            neighbours[child].add(int(parent))
    seen, stack = {0}, [0]
    while stack:
        for other in neighbours[stack.pop()] - seen:
            seen.add(other)
            stack.append(other)
    return len(seen) == size


def test_read_pool_handles_both_spellings() -> None:
    math_pool = read_pool(_pool("math"))
    assert len(math_pool) == 8
    assert math_pool[0].value == 72.0 and math_pool[0].answer == 512.0
    assert math_pool[0].text_key == "problem" and math_pool[0].unit is None
    scibench = read_pool(_pool("scibench"))
    assert scibench[0].text_key == "problem_text" and scibench[0].unit == "$\\mathrm{atm}$ "
    assert scibench[-1].answer == 89034.79  # released as "89,034.79"


def test_read_pool_rejects_an_item_without_one_marker() -> None:
    items = _pool("math")
    items[3] = dict(items[3], problem_UNK="no marked constant here")
    with pytest.raises(DatasetError, match=r"pool: item 3: field 'problem_UNK': .*exactly one marked constant"):
        read_pool(items)
    with pytest.raises(DatasetError, match=r"item 0: field 'q_vals'"):
        read_pool([dict(_pool("math")[0], q_vals="many")])


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 12])
def test_random_dag_is_connected_acyclic_with_one_root(size: int) -> None:
    rng = random.Random(size)
    for _ in range(200):
        order, parents = random_dag(size, rng)
        assert sorted(order) == list(range(size))
        position = {node: index for index, node in enumerate(order)}
        assert all(position[parent] < position[child] for child, found in parents.items() for parent in found)
        assert [node for node in order if not parents[node]] == [order[0]]
        edges = sum(len(found) for found in parents.values())
        assert size - 1 <= edges <= 2 * (size - 1)
        assert _connected(size, {str(p): [c for c in range(size) if p in parents[c]] for p in range(size)})


def test_draw_groups_are_distinct_and_balanced() -> None:
    groups = draw_groups(10, 7, 30, random.Random(1))
    assert all(len(set(group)) == 7 for group in groups)
    usage = Counter(index for group in groups for index in group)
    assert max(usage.values()) - min(usage.values()) <= 2


def test_format_adj_keeps_two_decimals_unless_inexact() -> None:
    assert format_adj(-218.0) == "-218.00"
    assert format_adj(1.4) == "1.40"
    assert format_adj(8.0 - 7.795) == "0.205"
    assert format_adj(-0.0001) == "-0.0001"


@pytest.mark.parametrize(("pool", "size"), [("math", 3), ("math", 5), ("math", 7), ("scibench", 3), ("scibench", 5)])
def test_synthesised_items_are_valid_and_shaped(pool: str, size: int) -> None:
    items = synthesize_mas(_pool(pool), size, 20, seed=11)
    assert len(items) == 20 and len({item["id"] for item in items}) == 20
    for item in items:
        assert validate_item(item) == []
        assert item["complexity"] == size and len(item["node_info"]) == size
        assert _connected(size, item["dag"])
        assert len(parse_plan(item["gt_plan"])) == size + 1 == len(item["gt_subtask"])
        assert sum(not info["in_edges"] for info in item["node_info"].values()) == 1
        assert len({info["question_id"] for info in item["node_info"].values()}) == size


def test_linked_constants_are_exact() -> None:
    for item in synthesize_mas(_pool("scibench"), 5, 20, seed=3):
        nodes = item["node_info"]
        for info in nodes.values():
            link = LINKED_CONSTANT_RE.search(node_text(info))
            if not info["in_edges"]:
                assert link is None and not isinstance(info["question_vals"], list)
                continue
            listed = [int(part) for part in link.group("parents").split(",")]
            assert listed == sorted(info["in_edges"])
            total = Fraction(link.group("adj")) + sum(Fraction(repr(nodes[str(p)]["answer_val"])) for p in listed)
            assert abs(float(total) - info["question_vals"][0]) < 1e-9


def test_several_parents_are_spelled_as_a_list() -> None:
    texts = [node_text(info) for item in synthesize_mas(_pool("math"), 7, 10, seed=2)
             for info in item["node_info"].values()]
    assert any(LINKED_CONSTANT_RE.search(text) and ", " in LINKED_CONSTANT_RE.search(text).group("parents")
               for text in texts)


def test_final_answer_is_the_product_and_the_loader_reads_the_plan() -> None:
    item = synthesize_mas(_pool("math"), 3, 1, seed=4)[0]
    nodes = item["node_info"]
    product = 1.0
    for info in nodes.values():
        product *= info["answer_val"]
    assert float(item["answer_number"]) == pytest.approx(product, rel=1e-12)
    problem = release_problem(Record(item, "synth", 0), id_prefix="x", source="synth")
    assert problem.id == item["id"] == "mas3-s4-0"
    order = [str(node) for node in item["topological_order"]]
    assert [step["id"] for step in problem.plan] == order + ["final"]
    for step in problem.plan[:-1]:
        assert step["depends_on"] == [str(p) for p in sorted(nodes[step["id"]]["in_edges"])]
        assert "recorded as Answer" not in step["instruction"]
    assert problem.plan[-1]["instruction"].startswith("Please calculate the value of Answer[0]*Answer[1]*Answer[2].")


def test_roots_keep_their_constant_and_scibench_keeps_units() -> None:
    item = synthesize_mas(_pool("scibench"), 3, 1, seed=0)[0]
    root = next(info for info in item["node_info"].values() if not info["in_edges"])
    assert "UNK" not in root["problem_text_UNK"]
    assert all("unit" in info for info in item["node_info"].values())
    assert "(They are numerical values and do not include units)" in item["problem_text"]


def test_synthesis_is_deterministic_by_seed() -> None:
    first = synthesize_mas(_pool("math"), 5, 10, seed=7)
    assert first == synthesize_mas(_pool("math"), 5, 10, seed=7)
    assert first != synthesize_mas(_pool("math"), 5, 10, seed=8)


def test_impossible_sizes_are_rejected() -> None:
    with pytest.raises(ValueError, match="size must be between 1 and the pool size 8"):
        synthesize_mas(_pool("math"), 9, 1, seed=0)


def test_synthesis_over_the_released_pools(shared_data: Path) -> None:
    for name in ("math_test", "scibench"):
        pool = json.loads((shared_data / "reso-mas" / "sub_questions" / f"{name}.json").read_text(encoding="utf-8"))
        for size in (3, 5, 7):
            items = synthesize_mas(pool, size, 30, seed=size)
            assert [validate_item(item) for item in items] == [[]] * 30
