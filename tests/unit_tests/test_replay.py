"""Replay agents: recorded answers matched to the question a prompt is about, with honest token counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from reso.agents.adapters.loader import load_chat_model
from reso.agents.adapters.prompting import ContextAnswer, render_subtask_prompt
from reso.agents.adapters.replay import (
    NoRecordingError,
    ReplayChatModel,
    ReplayError,
    load_replay_model,
    replay_correctness,
    replay_table,
)
from reso.agents.adapters.tokens import count_tokens
from reso.agents.defaults import default_replay_path, fewshot_prefix_path
from reso.agents.profiles import ModelSpec

GPT4 = "gpt-4-1106-preview"
MIXTRAL = "mistralai/Mixtral-8x7B-Instruct-v0.1"


@pytest.fixture(scope="module")
def first_record() -> dict:
    with default_replay_path().open(encoding="utf-8") as handle:
        return json.loads(handle.readline())


def test_cl100k_offline_counts_match_the_published_encoding() -> None:
    # "hello world" is [15339, 1917] in cl100k_base: two tokens.
    assert count_tokens("hello world") == 2
    assert count_tokens("") == 0


def test_replay_returns_the_exact_recorded_text_and_original_token_counts(first_record: dict) -> None:
    model = load_chat_model(ModelSpec(spec=f"replay:{default_replay_path()}#{GPT4}"))
    reply = model.invoke([SystemMessage("You are an expert."), HumanMessage(first_record["question"])])
    assert first_record["id"] == "gsm8k-test-0"
    assert reply.text == first_record["responses"][GPT4]
    prompt = fewshot_prefix_path().read_text(encoding="utf-8") + f"Question: {first_record['question']}\nAnswer:"
    assert reply.usage_metadata["input_tokens"] == count_tokens(prompt)
    assert reply.usage_metadata["output_tokens"] == count_tokens(first_record["responses"][GPT4])
    assert reply.usage_metadata["input_tokens"] > 900  # the 8-shot prefix dominates
    assert reply.response_metadata["replay_id"] == "gsm8k-test-0"


def test_subtask_prompt_with_context_suffix_and_loose_spacing_matches(first_record: dict) -> None:
    model = load_replay_model(f"gsm8k_replay_dev.jsonl#{MIXTRAL}")  # resolved in the package data
    question = first_record["question"].replace("’", "'").upper().replace(" ", "   ")
    prompt = render_subtask_prompt(f"{question}. The answer is recorded as Answer[2]",
                                   [ContextAnswer("0", "Janet's ducks lay 16 eggs per day.", "16")])
    assert model.invoke(prompt).text == first_record["responses"][MIXTRAL]


def test_a_prompt_that_only_contains_a_recorded_question_has_no_recording(first_record: dict) -> None:
    # Replaces the old "longest contained question wins" fallback: an extra sentence makes it another question.
    model = load_replay_model(f"gsm8k_replay_dev.jsonl#{MIXTRAL}")
    for text in (f"Solve this problem: {first_record['question']} Give the final number.",
                 f"{first_record['question']} Then double it."):
        with pytest.raises(NoRecordingError):
            model.invoke(render_subtask_prompt(text))


def test_an_explicit_prefix_frames_the_question(tmp_path: Path) -> None:
    path = tmp_path / "mini.jsonl"
    path.write_text(json.dumps({"id": "a", "question": "How many apples?", "responses": {"m": "three"}}) + "\n",
                    encoding="utf-8")
    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    model = load_replay_model(f"{path}#m", {"prefix_path": str(tmp_path / "empty.txt")})
    reply = model.invoke("how many   apples?")
    assert reply.text == "three"
    assert reply.usage_metadata["input_tokens"] == count_tokens("Question: How many apples?\nAnswer:")


def test_unknown_question_is_a_no_recording_error_not_an_answer() -> None:
    model = load_replay_model(f"{default_replay_path()}#{GPT4}")
    with pytest.raises(NoRecordingError, match=rf"no recording of this question in gsm8k_replay_dev.jsonl for {GPT4}"):
        model.invoke("What is the airspeed velocity of an unladen swallow?")


def test_unknown_model_lists_the_files_models() -> None:
    with pytest.raises(ReplayError, match=rf"no recordings for model 'gpt-5'.*{GPT4}, {MIXTRAL}"):
        load_chat_model(ModelSpec(spec=f"replay:{default_replay_path()}#gpt-5"))
    with pytest.raises(ReplayError, match="must name a model"):
        load_chat_model("replay:gsm8k_replay_dev.jsonl")


def test_bad_lines_name_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "a", "question": "q?", "responses": {"m": "x"}}\n{"id": "b", "question": ""}\n',
                    encoding="utf-8")
    with pytest.raises(ReplayError, match=rf"{path}:2: field 'question'"):
        replay_table(path)
    with pytest.raises(ReplayError, match="replay file not found"):
        replay_table(tmp_path / "missing.jsonl")


def test_index_is_built_once_and_shared_by_models_of_one_file() -> None:
    a = load_replay_model(f"{default_replay_path()}#{GPT4}")
    b = ReplayChatModel(replay_path=str(default_replay_path()), recorded_model=MIXTRAL)
    assert replay_table(default_replay_path()) is replay_table(str(default_replay_path()))
    assert a._table is b._table
    assert len(a._table) == 1000


def test_replay_correctness_matches_the_published_accuracy() -> None:
    labels = replay_correctness(default_replay_path())
    assert len(labels) == 2000
    assert labels[("gsm8k-test-0", GPT4)] is True
    # The shared data README: GPT-4 88.5 %, Mixtral 64.3 % correct on these 1,000 questions.
    assert sum(ok for (_, model), ok in labels.items() if model == GPT4) == 885
    assert sum(ok for (_, model), ok in labels.items() if model == MIXTRAL) == 643
