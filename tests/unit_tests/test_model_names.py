"""A model's name, free of file paths, is how the CRM and method names know it: records, scores and saved
CRMs carry `o1-mini`, not `replay:/abs/path/…#o1-mini`, so what one machine learned applies on another."""

from __future__ import annotations

import dataclasses

import pytest

from reso.agents.profiles import ModelSpec, model_name, portable_model
from reso.reward.base import ScoreItem
from reso.reward.features import candidates_from_items, candidates_from_records
from tests.unit_tests.test_small_crm import synthetic_records


@pytest.mark.parametrize(("spec", "name"), [
    ("replay:/opt/a/math.jsonl.gz,/opt/a/gsm.jsonl.gz#o1-mini-2024-09-12", "o1-mini-2024-09-12"),
    ("replay:gsm8k_replay_dev.jsonl#gpt-4-1106-preview", "gpt-4-1106-preview"),
    ("local:/models/qwen/Qwen2.5-0.5B", "Qwen2.5-0.5B"),
    ("openai:gpt-4o-mini", "gpt-4o-mini"),
    ("ollama:llama3:8b", "llama3:8b"),
    ("tool:calculator", "calculator"),
])
def test_a_model_is_named_without_its_provider_or_paths(spec: str, name: str) -> None:
    assert model_name(spec) == name == ModelSpec(spec=spec).model_name


def test_only_file_specs_are_renamed_for_the_crm() -> None:
    assert portable_model("replay:/abs/x.jsonl#careful") == "careful"
    assert portable_model("local:/abs/dir/model") == "model"
    # A recorded name with a colon, and a provider spec, are kept as they are.
    assert portable_model("llama3:8b") == "llama3:8b"
    assert portable_model("openai:gpt-4o") == "openai:gpt-4o"


def test_records_and_scored_items_key_the_same_model_wherever_it_is_installed() -> None:
    record = dataclasses.replace(synthetic_records(1)[0], model="replay:/home/a/data.jsonl#careful")
    item = ScoreItem(subtask="q", answer="#### 3", model="replay:/srv/b/data.jsonl#careful")
    assert candidates_from_records([record])[0].model == candidates_from_items([item])[0].model == "careful"
