"""The plan as a Mermaid flowchart: exact text for a small DAG, escaping, shortening, outcomes, odd ids."""

from __future__ import annotations

from reso.graphs.dag import TaskDAG
from reso.graphs.mermaid import dag_mermaid, escape_label, mermaid_ids, shorten
from reso.graphs.run_records import StepRecord

PLAN = [
    {"id": "0", "instruction": 'How many "red" apples [in box (A)]?', "depends_on": []},
    {"id": "1", "instruction": "With Answer[0] apples, how many bags | <box>?", "depends_on": ["0"]},
    {"id": "final", "instruction": "Please calculate the value of Answer[0]*Answer[1].", "depends_on": ["0", "1"]},
]


def test_a_plan_is_drawn_with_escaped_labels_and_edges_from_its_dependencies() -> None:
    assert dag_mermaid(TaskDAG.from_steps(PLAN)) == (
        "flowchart TD\n"
        '    step_0["0: How many #quot;red#quot; apples #91;in box #40;A#41;#93;?"]\n'
        '    step_1["1: With Answer#91;0#93; apples, how many bags #124; #60;box#62;?"]\n'
        '    step_final["final: Please calculate the value of Answer#91;0#93;*Answer#91;…"]\n'
        "    step_0 --> step_1\n"
        "    step_0 --> step_final\n"
        "    step_1 --> step_final\n"
    )


def test_finished_steps_name_the_kept_agent_and_value_and_failures_say_so() -> None:
    steps = {
        "0": StepRecord(id="0", instruction="", agent="gpt-4/algebra", value="3"),
        "1": StepRecord(id="1", instruction="", status="failed", agent="mixtral/algebra"),
    }
    lines = dag_mermaid(TaskDAG.from_steps(PLAN), steps).splitlines()
    assert lines[1].endswith('?<br/>gpt-4/algebra → 3"]')
    assert lines[2].endswith('#62;?<br/>failed"]')
    assert lines[3].endswith('…"]'), "a step not run yet has no outcome line"


def test_an_escape_code_is_not_escaped_again_and_backticks_are_escaped() -> None:
    assert escape_label('#quot; "`x`"') == "#35;quot; #quot;#96;x#96;#quot;"


def test_instructions_are_put_on_one_line_and_cut_with_an_ellipsis() -> None:
    assert shorten("a\n  b\tc", 10) == "a b c"
    assert shorten("abcdefghij", 10) == "abcdefghij"
    assert shorten("abcde fghijk", 7) == "abcde…"


def test_ids_a_mermaid_id_cannot_hold_number_every_box_by_position() -> None:
    dag = TaskDAG.from_steps([
        {"id": "step 1", "instruction": "A", "depends_on": []},
        {"id": "a-b", "instruction": "B", "depends_on": ["step 1"]},
    ])
    assert mermaid_ids(dag) == {"step 1": "step0", "a-b": "step1"}
    assert dag_mermaid(dag) == ('flowchart TD\n    step0["step 1: A"]\n    step1["a-b: B"]\n'
                                "    step0 --> step1\n")
