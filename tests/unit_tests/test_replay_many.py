"""Many-model replay: gzip files with optional labels, models over several files, the zero-shot prompt the
recordings were made with, and linked sub-questions resolved from the parents' answers."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from reso.agents.adapters.prompting import ContextAnswer, render_subtask_prompt
from reso.agents.adapters.replay import (
    NoRecordingError,
    ReplayError,
    load_replay_model,
    replay_correctness,
    replay_table,
)
from reso.agents.adapters.replay_question import asked_question, constant_text
from reso.agents.adapters.tokens import count_tokens
from reso.agents.defaults import zeroshot_prompt_path
from reso.evals.datasets.release_format import linked_constant, recorded_suffix

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "replay"
MATH = FIXTURES / "math_mini.jsonl.gz"
GSM = FIXTURES / "gsm_mini.jsonl"
APPLES = "Tom has 40 apples and gives away 15. How many apples are left?"
# Recorded by mystery-model alone: its 9 linked to parents 0 and 1 (7 + 60 - 58 = 9).
PAGES_LINKED = ("Ann reads 8 pages a day for 9 days. How many pages does she read?".replace(
    "9", linked_constant(2, [0, 1], "-58.00"), 1) + recorded_suffix(2))


def ask(model, text: str, answers: dict[str, str | None] | None = None) -> str:
    context = [ContextAnswer(node, f"sub-question {node}", value, failed=value is None)
               for node, value in (answers or {}).items()]
    return model.invoke(render_subtask_prompt(text, context)).text


def test_gz_files_load_with_optional_labels() -> None:
    table = replay_table(MATH)
    assert len(table) == 3
    assert table.models == ["deepseek-chat", "gemma-2-2b-it"]
    labelled, _, bare = table.recordings
    assert labelled.extracted == {"deepseek-chat": "7", "gemma-2-2b-it": "8"}
    assert table.recordings[1].extracted["gemma-2-2b-it"] is None
    assert bare.correct == {} and bare.extracted == {}
    assert replay_correctness(MATH) == {("m-0", "deepseek-chat"): True, ("m-0", "gemma-2-2b-it"): False,
                                        ("m-1", "deepseek-chat"): True, ("m-1", "gemma-2-2b-it"): False}


def test_a_damaged_gz_file_is_a_replay_error_naming_it(tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl.gz"
    broken.write_bytes(MATH.read_bytes()[:40])
    with pytest.raises(ReplayError, match=r"broken\.jsonl\.gz: cannot read the replay file"):
        replay_table(broken)
    bad_label = tmp_path / "labels.jsonl"
    bad_label.write_text(json.dumps({"id": "a", "question": "q?", "responses": {"m": "x"}, "extracted": {"m": 3}}),
                         encoding="utf-8")
    with pytest.raises(ReplayError, match=r"labels\.jsonl:1: field 'extracted'"):
        replay_table(bad_label)


def test_a_model_absent_from_a_question_has_no_recording_of_it() -> None:
    gemma = load_replay_model(f"{MATH}#gemma-2-2b-it")
    assert json.loads(ask(gemma, "What is $3 + 4$?"))["answer"] == "8"
    with pytest.raises(NoRecordingError, match="no recording of this question in math_mini.jsonl.gz for gemma-2-2b-it"):
        ask(gemma, "Find $x$ if $2x = 10$.")


def test_zero_shot_files_count_the_json_instruction_as_input() -> None:
    reply = load_replay_model(f"{MATH}#deepseek-chat").invoke("What is $3 + 4$?")
    template = zeroshot_prompt_path().read_text(encoding="utf-8")
    assert "{question}" in template
    assert reply.usage_metadata["input_tokens"] == count_tokens(template.replace("{question}", "What is $3 + 4$?"))
    assert reply.usage_metadata["input_tokens"] > 100  # the instruction, not just the question
    assert reply.usage_metadata["output_tokens"] == count_tokens(reply.text)


def test_one_model_over_two_files_answers_from_whichever_records_the_question() -> None:
    model = load_replay_model(f"{MATH},{GSM}#deepseek-chat")
    assert json.loads(ask(model, "What is $3 + 4$?"))["answer"] == "7"
    reply = model.invoke(APPLES)
    assert json.loads(reply.text)["answer"] == "25"
    assert reply.response_metadata["replay_file"] == str(GSM) and reply.response_metadata["replay_id"] == "g-0"
    with pytest.raises(NoRecordingError, match="in math_mini.jsonl.gz, gsm_mini.jsonl for deepseek-chat"):
        ask(model, "Ann reads 8 pages a day for 9 days. How many pages does she read?")


def test_every_file_of_a_spec_must_record_the_model() -> None:
    with pytest.raises(ReplayError, match=r"math_mini\.jsonl\.gz: no recordings for model 'mystery-model'"):
        load_replay_model(f"{MATH},{GSM}#mystery-model")


def test_the_release_suffix_is_cut_before_the_exact_match() -> None:
    model = load_replay_model(f"{GSM}#deepseek-chat")
    assert json.loads(ask(model, APPLES + recorded_suffix(3)))["answer"] == "25"
    assert asked_question(render_subtask_prompt(APPLES + recorded_suffix(3))) == APPLES


# -- linked sub-questions ------------------------------------------------------------------------------------

def linked(parents: list[int], adj: str) -> str:
    """The apples question with its 40 replaced by a linked constant, as the synthesiser writes it."""
    return APPLES.replace("40", linked_constant(2, parents, adj)) + recorded_suffix(2)


def test_right_parent_answers_give_back_the_recorded_question() -> None:
    model = load_replay_model(f"{GSM}#deepseek-chat")
    # 7 + 60 - 27 = 40, the recorded constant.
    assert json.loads(ask(model, linked([0, 1], "-27.00"), {"0": "7", "1": "60"}))["answer"] == "25"


def test_a_wrong_parent_answer_is_answered_with_the_recording_of_the_original() -> None:
    model = load_replay_model(f"{GSM}#deepseek-chat")
    # 39 apples: never recorded; a live model would answer it, so the replay answers the original (40).
    assert json.loads(ask(model, linked([0, 1], "-27.00"), {"0": "7", "1": "59"}))["answer"] == "25"


def test_a_missing_or_unknown_parent_answer_is_answered_with_the_recording_of_the_original() -> None:
    model = load_replay_model(f"{GSM}#deepseek-chat")
    for parents in ({"0": "7"}, {"0": "7", "1": None}, {"0": "7", "1": "sixty"}):  # None: "Answer[1] is unknown"
        assert json.loads(ask(model, linked([0, 1], "-27.00"), parents))["answer"] == "25"
    # A model with no recording of the original still has none.
    with pytest.raises(NoRecordingError):
        ask(load_replay_model(f"{GSM}#deepseek-chat"), PAGES_LINKED, {"0": "7", "1": "59"})


@pytest.mark.parametrize("value, adj", [("0.75", "39.25"), ("\\frac{3}{4}", "39.25"), ("3/4", "39.25"),
                                        ("1e-05", "39.99999"), ("-3", "43"), ("1/3", "39.666667")])
def test_non_integer_and_written_out_parents_resolve_exactly(value: str, adj: str) -> None:
    model = load_replay_model(f"{GSM}#deepseek-chat")
    assert json.loads(ask(model, linked([0], adj), {"0": value}))["answer"] == "25"


def test_constants_are_integers_within_tolerance_else_plain_decimals() -> None:
    assert constant_text(Fraction(40)) == "40"
    assert constant_text(Fraction(40) + Fraction(1, 3_000_000)) == "40"
    assert constant_text(Fraction(-3)) == "-3"
    assert constant_text(Fraction(81, 2)) == "40.5"
    assert constant_text(Fraction(1, 8)) == "0.125"
    assert constant_text(Fraction(40) + Fraction(1, 1000)) == "40.001"
