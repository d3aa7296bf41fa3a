"""Recorded answers rewritten in ProcessBench's layout read back as the same labelled answers."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from reso.evals.cli import app
from reso.reward.labelled_records import LabelledRecord, load_records
from reso.reward.training.step_layout import as_step_record, working_steps

RIGHT = LabelledRecord(
    instruction="Tom has 40 apples and gives away 15. How many are left?",
    answer='{"reasoning": "Tom starts with 40 apples.\\nHe gives away 15, so 40 - 15 = 25 remain. '
           'That is the count.", "answer": "25"}',
    label=1, model="careful", question_id="g-0")
WRONG = LabelledRecord(instruction=RIGHT.instruction, answer="40 + 15 = 55 apples are left.", label=0,
                       model="hasty", question_id="g-0")


def test_working_is_cut_at_lines_and_sentences_and_short_pieces_are_merged() -> None:
    long = "A" * 170 + "."
    assert working_steps(f"{long} Then b.\nC follows. D ends.") == [long, "Then b. C follows. D ends."]
    assert working_steps("  \n\n ") == []


def test_a_record_becomes_steps_ending_in_its_boxed_answer_with_its_label() -> None:
    right = as_step_record(RIGHT)
    assert right is not None and right["label"] == -1 and right["generator"] == "careful"
    assert right["steps"][-1] == "Therefore, the final answer is $\\boxed{25}$."
    assert "40 - 15 = 25" in " ".join(right["steps"][:-1])
    wrong = as_step_record(WRONG, named=False)
    assert wrong is not None and wrong["generator"] == "unnamed"
    assert wrong["label"] == len(wrong["steps"]) - 1 == 0  # no stated answer: the working is the one step


def test_cli_writes_records_that_read_back_with_the_same_labels(tmp_path: Path) -> None:
    source = tmp_path / "answers.jsonl"
    source.write_text("".join(json.dumps(r.to_dict()) + "\n" for r in (RIGHT, WRONG)), encoding="utf-8")
    out = tmp_path / "steps.jsonl"
    result = CliRunner().invoke(app, ["crm", "as-steps", "--data", str(source), "--out", str(out), "--unnamed"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"records": 2, "written": 2, "out": str(out)}
    back = load_records(out)
    assert [(r.label, r.model, r.first_error_step) for r in back] == [(1, "unnamed", -1), (0, "unnamed", 0)]
    assert back[0].steps is not None and back[0].steps[-1].endswith("\\boxed{25}$.")
