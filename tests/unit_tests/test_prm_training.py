"""train_prm: LoRA fine-tuning of a tiny PRM on CPU, reloaded by ProcessRewardScorer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from reso.reward.base import ScoreItem
from reso.reward.labelled_records import LabelledRecord
from reso.reward.prm import ProcessRewardScorer
from reso.reward.training.prm_training import IGNORE_INDEX, encode_record, separator_loss, train_prm
from tests.tiny_models import save_tiny_prm, save_tiny_remote_code_prm, synthetic_items


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_tiny_prm(tmp_path_factory.mktemp("base"))


@pytest.fixture(scope="module")
def records() -> list[LabelledRecord]:
    items = synthetic_items(8, sentences=(1, 3), seed=5)
    return [LabelledRecord(instruction=item.subtask, answer=item.answer, context=item.context, label=i % 2)
            for i, item in enumerate(items)]


def _items(records: list[LabelledRecord]) -> list[ScoreItem]:
    return [ScoreItem(subtask=r.instruction, answer=r.answer, context=r.context) for r in records]


def test_labels_sit_on_the_separator_only(base: Path, records: list[LabelledRecord]) -> None:
    scorer = ProcessRewardScorer(base, device="cpu")
    encoded = encode_record(scorer.tokenizer, records[1], scorer.separator_id, max_length=4096)
    assert encoded["input_ids"] == scorer.encode(_items(records)[1])  # same input as the scorer reads
    labelled = [i for i, label in enumerate(encoded["labels"]) if label != IGNORE_INDEX]
    assert labelled == [encoded["input_ids"].index(scorer.separator_id)]
    assert encoded["labels"][labelled[0]] == 1


def test_separator_loss_is_cross_entropy_at_labelled_positions() -> None:
    logits = torch.tensor([[[0.0, 0.0], [2.0, -1.0], [0.5, 0.5]]])
    labels = torch.tensor([[IGNORE_INDEX, 1, IGNORE_INDEX]])
    expected = -torch.log_softmax(torch.tensor([2.0, -1.0]), dim=-1)[1]
    assert separator_loss((logits,), labels).item() == pytest.approx(expected.item(), rel=1e-6)
    assert separator_loss((logits,), labels, num_items_in_batch=4).item() == pytest.approx(expected.item() / 4)


@pytest.mark.parametrize("merge", [True, False])
def test_three_steps_on_cpu_then_the_scorer_reloads(tmp_path: Path, base: Path, records: list[LabelledRecord],
                                                     merge: bool) -> None:
    out = train_prm(records, tmp_path / "out", base=base, max_steps=3, effective_batch=4, per_device_batch=2,
                    lr=5e-2, merge=merge, logging_steps=1)
    info = json.loads((out / "prm_training.json").read_text())
    assert info["steps"] == 3 and info["records"] == 8 and info["merged"] is merge
    assert info["settings"]["gradient_accumulation"] == 2 and info["settings"]["bf16"] is False
    assert (out / ("adapter_config.json" if not merge else "config.json")).is_file()

    trained = ProcessRewardScorer(out, device="cpu")
    before = ProcessRewardScorer(base, device="cpu").score(_items(records))
    after = trained.score(_items(records))
    assert all(0.0 <= value <= 1.0 for value in after)
    assert after != pytest.approx(before, abs=1e-4)  # the adapter and head changed the model


def test_paper_defaults_without_a_step_limit(tmp_path: Path, base: Path, records: list[LabelledRecord]) -> None:
    out = train_prm(records[:4], tmp_path / "out", base=base, epochs=1, effective_batch=4, per_device_batch=4)
    settings = json.loads((out / "prm_training.json").read_text())["settings"]
    assert settings["lora_r"] == 8 and settings["lora_alpha"] == 32 and settings["lora_dropout"] == 0.1
    assert settings["target_modules"] == ["q_proj", "v_proj"] and settings["modules_to_save"] == ["score"]
    assert settings["lr"] == 1e-4 and settings["max_length"] == 4096


def test_remote_code_layout_trains_and_reloads(tmp_path: Path, records: list[LabelledRecord]) -> None:
    base = save_tiny_remote_code_prm(tmp_path / "base")
    out = train_prm(records, tmp_path / "out", base=base, max_steps=2, effective_batch=2, per_device_batch=2)
    scorer = ProcessRewardScorer(out, device="cpu")
    assert type(scorer.model).__name__ == "Qwen2ForProcessRewardModel"
    assert len(scorer.score(_items(records))) == len(records)


def test_bad_records_are_refused(tmp_path: Path, base: Path) -> None:
    with pytest.raises(ValueError, match="record 1 has label 2"):
        train_prm([LabelledRecord("q", "1", 1), LabelledRecord("q", "2", 2)], tmp_path, base=base)
    with pytest.raises(ValueError, match="no training records"):
        train_prm([], tmp_path, base=base)


def test_training_logs_stay_off_stdout(tmp_path: Path, base: Path, records: list[LabelledRecord],
                                       capsys: pytest.CaptureFixture[str]) -> None:
    train_prm(records[:2], tmp_path / "out", base=base, max_steps=1, effective_batch=2, logging_steps=1)
    assert capsys.readouterr().out == ""  # CLI callers print their JSON on stdout
    assert not (tmp_path / "out" / "trainer").exists()
