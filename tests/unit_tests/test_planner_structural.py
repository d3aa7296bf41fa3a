"""The structural planner reads the exact DAG out of MAS-format questions, released and generated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reso.agents.adapters.release_text import split_recorded
from reso.graphs.dag import PlanError
from reso.graphs.planners import (
    FINAL_ID,
    StructuralPlanner,
    answer_references,
    looks_structural,
    parse_mas_steps,
)
from tests.resources import unavailable

HEADER = "The following is a complex question composed of multiple sub-questions:"
FINAL_INTRO = "Please use the answers to the above questions to perform the following calculations:"

# Written in the release's layout: a two-parent reference as a list, a block spanning lines, a 942.0.
SMALL = f"""{HEADER}

Let $x = UNK_0(a constant calculated by adding the sum of Answer[1, 2] to the number (-3.00). )$.
Find $x^2$.. The answer is recorded as Answer[0]

Determine the largest $n$ such that $942.0!$ is divisible by $15^n$.. The answer is recorded as Answer[1]

A train covers UNK_2(a constant calculated by adding the sum of Answer[1] to the number (5.00). ) km.
How far is it from home?
The unit of answer should be km. The answer is recorded as Answer[2]

{FINAL_INTRO}
Please calculate the value of Answer[0]*Answer[1]*Answer[2]. Conclude the answer by stating \
'The answer is therefore \\boxed{{[ANSWER]}}.'"""


def test_reads_the_small_example_exactly() -> None:
    dag = StructuralPlanner().plan(SMALL)
    assert dag.ids == ["0", "1", "2", FINAL_ID]
    assert dag.parents("0") == ["1", "2"]
    assert dag.parents("1") == []
    assert dag.parents("2") == ["1"]
    assert dag.parents(FINAL_ID) == ["0", "1", "2"]
    assert dag.final_id == FINAL_ID
    assert dag.topological_order() == ["1", "2", "0", FINAL_ID]


def test_a_question_on_one_line_ends_each_step_at_its_full_stop() -> None:
    # docs/models.md's own question: the sentence's full stop ends its step, and the next starts with its words.
    text = ("A box holds 12 eggs. How many eggs are in 5 boxes? The answer is recorded as Answer[1]. A carton of milk "
            "costs 3 dollars. How much do 4 cartons cost? The answer is recorded as Answer[2]. Please calculate the "
            "value of Answer[1]*Answer[2].")
    dag = StructuralPlanner().plan(text)
    assert [dag.node(step).instruction for step in dag.ids] == [
        "A box holds 12 eggs. How many eggs are in 5 boxes? The answer is recorded as Answer[1].",
        "A carton of milk costs 3 dollars. How much do 4 cartons cost? The answer is recorded as Answer[2].",
        "Please calculate the value of Answer[1]*Answer[2]."]
    assert dag.parents(FINAL_ID) == ["1", "2"]
    # What a replay agent looks up: the sub-question without its answer sentence.
    assert split_recorded(dag.node("2").instruction) == (
        "A carton of milk costs 3 dollars. How much do 4 cartons cost?", "2")


def test_instructions_are_the_blocks_with_their_answer_sentence() -> None:
    dag = StructuralPlanner().plan(SMALL)
    assert dag.node("0").instruction == (
        "Let $x = UNK_0(a constant calculated by adding the sum of Answer[1, 2] to the number (-3.00). )$.\n"
        "Find $x^2$.. The answer is recorded as Answer[0]"
    )
    assert dag.node("1").instruction.startswith("Determine the largest $n$ such that $942.0!$")
    assert dag.node("2").instruction.endswith("km. The answer is recorded as Answer[2]")
    assert "\nHow far is it from home?\n" in dag.node("2").instruction
    assert dag.node(FINAL_ID).instruction.startswith("Please calculate the value of Answer[0]*Answer[1]")
    assert HEADER not in dag.node("0").instruction
    assert FINAL_INTRO not in dag.node(FINAL_ID).instruction


def test_report_of_a_clean_read_has_no_notes() -> None:
    result = StructuralPlanner().plan_with_report(SMALL)
    assert result.planner == "structural" and result.notes == [] and result.attempts == 0


async def test_aplan_gives_the_same_plan() -> None:
    assert (await StructuralPlanner().aplan(SMALL)).to_steps() == StructuralPlanner().plan(SMALL).to_steps()


def test_answer_references_reads_lists_and_singles_once_each() -> None:
    assert answer_references("Answer[3] plus the sum of Answer[1, 4] and Answer[ 3 ]") == ["3", "1", "4"]
    assert answer_references("no references, only [1, 2]") == []


def test_looks_structural() -> None:
    assert looks_structural(SMALL)
    assert not looks_structural("What is 2 + 2?")
    assert not looks_structural("x. The answer is recorded as Answer[0]")  # no final step
    assert not looks_structural("")


def test_unknown_and_self_references_are_repaired_with_notes() -> None:
    text = (
        "Find UNK_0(the sum of Answer[0, 7]).. The answer is recorded as Answer[0]\n\n"
        "Please calculate the value of Answer[0]."
    )
    result = StructuralPlanner().plan_with_report(text)
    assert result.dag.parents("0") == []
    assert any("itself" in note for note in result.notes)
    assert any("unknown step '7'" in note for note in result.notes)


def test_an_answer_the_final_step_ignores_is_joined_to_it() -> None:
    text = ("A.. The answer is recorded as Answer[0]\n\nB.. The answer is recorded as Answer[1]\n\n"
            "Please calculate the value of Answer[1].")
    result = StructuralPlanner().plan_with_report(text)
    assert result.dag.parents(FINAL_ID) == ["1", "0"]
    assert any("'0'" in note for note in result.notes)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("What is 2 + 2?", "not in the MAS benchmark format"),
        ("A.. The answer is recorded as Answer[0]\n\nThanks.", "no final step"),
        (("A.. The answer is recorded as Answer[0]\n\nB.. The answer is recorded as Answer[0]\n\n"
          "Please calculate Answer[0]."), "'0' used by more than one step"),
        (("A Answer[1].. The answer is recorded as Answer[0]\n\nB Answer[0].. The answer is recorded as "
          "Answer[1]\n\nPlease calculate Answer[0]*Answer[1]."), "cycle"),
    ],
)
def test_unreadable_texts_raise_plan_errors(text: str, message: str) -> None:
    with pytest.raises(PlanError, match=message):
        StructuralPlanner().plan(text)


def test_final_step_without_the_usual_wording_is_kept_whole() -> None:
    steps = parse_mas_steps("A.. The answer is recorded as Answer[0]\n\nNow add 1 to Answer[0].")
    assert steps[-1] == {"id": FINAL_ID, "instruction": "Now add 1 to Answer[0].", "depends_on": ["0"]}


# ---- every released item, from both of its texts ----------------------------------------------------

RELEASE_FILES = ["MATH-MAS-Easy.json", "MATH-MAS-Medium.json", "MATH-MAS-Hard.json",
                 "Scibench-MAS-Easy.json", "Scibench-MAS-Medium.json"]


@pytest.mark.parametrize("name", RELEASE_FILES)
def test_recovers_the_exact_dag_of_every_released_item(shared_data: Path, name: str) -> None:
    path = shared_data / "reso-mas" / name
    if not path.is_file():
        unavailable(f"{path} not found")
    items = json.loads(path.read_text(encoding="utf-8"))
    planner = StructuralPlanner()
    checked = 0
    for index, item in enumerate(items):
        expected = {str(node): sorted(str(p) for p in info["in_edges"])
                    for node, info in item["node_info"].items()}
        children = {str(parent): sorted(str(c) for c in kids) for parent, kids in item["dag"].items()}
        for field in ("problem_text", "problem_text_sort"):
            where = f"{name} item {index} {field}"
            assert looks_structural(item[field]), where
            result = planner.plan_with_report(item[field])
            dag = result.dag
            assert result.notes == [], where
            assert set(dag.ids) == set(expected) | {FINAL_ID}, where
            assert {node: sorted(dag.parents(node)) for node in expected} == expected, where
            assert {node: sorted(c for c in dag.children(node) if c != FINAL_ID) for node in expected} \
                == children, where
            assert sorted(dag.parents(FINAL_ID)) == sorted(expected), where
            assert dag.final_id == FINAL_ID, where
            assert dag.node(FINAL_ID).instruction.startswith("Please calculate the value of"), where
            for node in expected:
                assert dag.node(node).instruction.endswith(f"The answer is recorded as Answer[{node}]"), where
            checked += 1
        if "topological_order" in item:
            sorted_dag = planner.plan(item["problem_text_sort"])
            assert sorted_dag.ids[:-1] == [str(i) for i in item["topological_order"]]
    assert checked == 2 * len(items) > 0


# ---- generated questions in the MAS format -------------------------------------------------------------

FILLER = st.text(alphabet="abcdefgh xyz$^{}()=+-.,?\n\\0123456789", min_size=1, max_size=30)


@st.composite
def mas_questions(draw: st.DrawFn) -> tuple[str, dict[str, list[str]]]:
    """A random DAG over sub-questions 0..n-1 rendered as a MAS text, with its expected parents."""
    n = draw(st.integers(min_value=1, max_value=8))
    rank = draw(st.permutations(range(n)))  # a random topological order of the indices
    parents: dict[str, list[str]] = {}
    blocks: list[str] = []
    for position, node in enumerate(rank):
        deps = draw(st.lists(st.sampled_from(rank[:position]), unique=True, max_size=4)) if position else []
        parents[str(node)] = sorted(str(d) for d in deps)
        before, after = draw(FILLER), draw(FILLER)
        if not deps:
            link = f"{draw(st.integers(1, 999))}.0"
        elif len(deps) == 1 or draw(st.booleans()):
            listed = ", ".join(str(d) for d in deps)
            link = (f"UNK_{node}(a constant calculated by adding the sum of Answer[{listed}] to the number "
                    f"({draw(st.integers(-99, 99))}.00). )")
        else:
            link = " and ".join(f"Answer[{d}]" for d in deps)
        blocks.append(f"{before} {link}{after}. The answer is recorded as Answer[{node}]")
    order = draw(st.sampled_from(["index", "topological", "shuffled"]))
    if order == "index":
        blocks = [blocks[rank.index(i)] for i in range(n)]
    elif order == "shuffled":
        blocks = draw(st.permutations(blocks))
    product = "*".join(f"Answer[{i}]" for i in range(n))
    text = (f"{HEADER}\n\n" + "\n\n".join(blocks) + f"\n\n{FINAL_INTRO}\nPlease calculate the value of "
            f"{product}. Conclude the answer by stating 'The answer is therefore \\boxed{{[ANSWER]}}.'")
    return text, parents


@given(mas_questions())
@settings(max_examples=200, deadline=None)
def test_generated_mas_questions_are_recovered_exactly(case: tuple[str, dict[str, list[str]]]) -> None:
    text, parents = case
    assert looks_structural(text)
    result = StructuralPlanner().plan_with_report(text)
    dag = result.dag
    assert result.notes == []
    assert {node: sorted(dag.parents(node)) for node in parents} == parents
    assert sorted(dag.parents(FINAL_ID)) == sorted(parents)
    assert dag.final_id == FINAL_ID
    assert set(dag.ids) == set(parents) | {FINAL_ID}
    for node in parents:
        assert dag.node(node).instruction.endswith(f"The answer is recorded as Answer[{node}]")

