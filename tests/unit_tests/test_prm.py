"""ProcessRewardScorer on tiny random Qwen2 PRMs: input layout, batching, padding, devices, load errors."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from reso.reward.base import ScoreItem
from reso.reward.prm import ProcessRewardScorer, render_prm_input, separator_positions, user_turn
from reso.reward.prm_loading import PRMLoadError, checkpoint_layout
from tests.tiny_models import (
    save_tiny_causal_lm,
    save_tiny_prm,
    save_tiny_remote_code_prm,
    synthetic_items,
    tiny_tokenizer,
)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_tiny_prm(tmp_path_factory.mktemp("prm"))


@pytest.fixture(scope="module")
def items() -> list[ScoreItem]:
    return synthetic_items(7, sentences=(1, 8), seed=3)


def test_scores_are_probabilities_one_per_item(checkpoint: Path, items: list[ScoreItem]) -> None:
    scorer = ProcessRewardScorer(checkpoint, device="cpu")
    scores = scorer.score(items)
    assert len(scores) == len(items)
    assert all(0.0 <= value <= 1.0 for value in scores)
    assert max(scores) - min(scores) > 0.01  # distinct inputs give distinct scores
    assert scorer.name == f"prm:{checkpoint}"


@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_batched_scores_equal_one_by_one(checkpoint: Path, items: list[ScoreItem], padding_side: str) -> None:
    scorer = ProcessRewardScorer(checkpoint, device="cpu", dtype=torch.float32, batch_size=4,
                                 padding_side=padding_side)
    assert len({len(scorer.encode(item)) for item in items}) == len(items)  # every batch is padded
    batched = scorer.score(items)
    scorer.batch_size = 1
    single = scorer.score(items)
    assert batched == pytest.approx(single, abs=1e-5)


def test_score_is_class_one_probability_at_the_separator(checkpoint: Path, items: list[ScoreItem]) -> None:
    scorer = ProcessRewardScorer(checkpoint, device="cpu")
    ids = scorer.encode(items[0])
    sep = ids.index(scorer.separator_id)
    assert sep < len(ids) - 1  # the chat template closes the turn after the separator
    with torch.inference_mode():
        logits = scorer.model(input_ids=torch.tensor([ids])).logits[0]
    expected = torch.softmax(logits[sep], dim=-1)[1].item()
    assert scorer.score(items[:1])[0] == pytest.approx(expected, abs=1e-6)
    assert scorer.score(items[:1])[0] != pytest.approx(torch.softmax(logits[-1], dim=-1)[1].item(), abs=1e-4)


@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_separator_position_found_per_row(padding_side: str) -> None:
    tokenizer = tiny_tokenizer(padding_side=padding_side)
    sep = tokenizer.convert_tokens_to_ids("<extra_0>")
    rows = [[5, 6, sep, 7], [5, sep, 9, 9, 9, 7], [sep]]
    batch = tokenizer.pad({"input_ids": rows}, padding=True, return_tensors="pt")
    positions = separator_positions(batch["input_ids"], batch["attention_mask"], sep)
    width = 6
    offsets = [width - len(row) if padding_side == "left" else 0 for row in rows]
    assert positions.tolist() == [offset + row.index(sep) for offset, row in zip(offsets, rows, strict=True)]
    assert all(batch["input_ids"][i, p] == sep for i, p in enumerate(positions.tolist()))


def test_separator_positions_ignore_padding_that_equals_the_separator() -> None:
    input_ids = torch.tensor([[3, 3, 8, 4], [8, 8, 8, 8]])
    mask = torch.tensor([[0, 0, 1, 1], [1, 1, 0, 0]])
    assert separator_positions(input_ids, mask, 8).tolist() == [2, 1]
    assert separator_positions(input_ids, mask, 99).tolist() == [-1, -1]


def test_input_layout_follows_the_paper(checkpoint: Path) -> None:
    scorer = ProcessRewardScorer(checkpoint, device="cpu")
    text, from_template = render_prm_input(scorer.tokenizer, subtask="How many eggs are left?",
                                           context="Answer[1] = 5", answer="5 - 2 = 3. \\boxed{3}")
    assert from_template
    assert "<|im_start|>system\nPlease reason step by step" in text
    assert "<|im_start|>user\n**Previous Steps**: Answer[1] = 5\n\nHow many eggs are left?<|im_end|>" in text
    assert text.endswith("<|im_start|>assistant\n5 - 2 = 3. \\boxed{3}<extra_0><|im_end|>\n")
    assert user_turn("**Previous Steps**: []\n\nyour current sub-question: x") == \
        "**Previous Steps**: []\n\nyour current sub-question: x"


def test_plain_text_fallback_without_chat_template(tmp_path: Path, items: list[ScoreItem]) -> None:
    scorer = ProcessRewardScorer(save_tiny_prm(tmp_path, chat_template=False), device="cpu", batch_size=3)
    text, from_template = render_prm_input(scorer.tokenizer, subtask="Q?", answer="It is 4.", context="")
    assert not from_template
    assert text == ("Please reason step by step, and put your final answer within \\boxed{}.\n\n"
                    "**Previous Steps**: []\n\nQ?\n\nIt is 4.<extra_0>")
    batched = scorer.score(items)
    scorer.batch_size = 1
    assert batched == pytest.approx(scorer.score(items), abs=1e-5)


def test_separators_inside_texts_are_removed(checkpoint: Path) -> None:
    scorer = ProcessRewardScorer(checkpoint, device="cpu")
    item = ScoreItem(subtask="Q<extra_0>?", context="<extra_0>", answer="Step 1<extra_0> gives 4.")
    assert scorer.encode(item).count(scorer.separator_id) == 1


def test_long_inputs_lose_their_beginning_not_the_separator(checkpoint: Path, items: list[ScoreItem]) -> None:
    scorer = ProcessRewardScorer(checkpoint, device="cpu", max_length=48)
    ids = scorer.encode(items[0])
    assert len(ids) == 48 and scorer.separator_id in ids
    assert 0.0 < scorer.score(items[:1])[0] < 1.0


def test_bad_answers_score_zero_with_a_reason(checkpoint: Path, items: list[ScoreItem]) -> None:
    scorer = ProcessRewardScorer(checkpoint, device="cpu")
    bad = [ScoreItem(subtask="Q", answer=""), ScoreItem(subtask="Q", answer="I am not sure."),
           ScoreItem(subtask="Q", answer="So \\boxed{nan}"), ScoreItem(subtask="Q", answer="It is 1e999"),
           ScoreItem(subtask="Q", answer=None)]  # type: ignore[arg-type]
    results = scorer.score_detailed([items[0], *bad, items[1]])
    assert [r.value for r in results[1:-1]] == [0.0] * len(bad)
    assert [r.reason for r in results[1:-1]] == [
        "empty answer", "no final answer or number in the answer",
        "the final answer 'nan' is not a finite number", "the final answer '1e999' is not a finite number",
        "answer is not text (NoneType)"]
    assert results[0].reason is None and results[-1].reason is None
    assert [results[0].value, results[-1].value] == pytest.approx(scorer.score([items[0], items[1]]), abs=1e-6)
    assert scorer.score([]) == []


def test_cpu_runs_in_float32(checkpoint: Path) -> None:
    scorer = ProcessRewardScorer(checkpoint, device="cpu")
    assert scorer.device.type == "cpu" and scorer.dtype == torch.float32
    assert next(scorer.model.parameters()).dtype == torch.float32


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error raised on a machine without CUDA")
def test_cuda_requested_without_cuda_is_an_error(checkpoint: Path) -> None:
    with pytest.raises(ValueError, match="CUDA is not available"):
        ProcessRewardScorer(checkpoint, device="cuda")
    assert ProcessRewardScorer(checkpoint).device.type == "cpu"  # the default falls back to the CPU


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_defaults_to_bfloat16_and_agrees_with_cpu(checkpoint: Path, items: list[ScoreItem]) -> None:
    gpu = ProcessRewardScorer(checkpoint)
    assert gpu.device.type == "cuda" and gpu.dtype == torch.bfloat16
    cpu = ProcessRewardScorer(checkpoint, device="cpu")
    assert gpu.score(items) == pytest.approx(cpu.score(items), abs=0.03)


def test_remote_code_layout_loads_and_batches(tmp_path: Path, items: list[ScoreItem]) -> None:
    path = save_tiny_remote_code_prm(tmp_path)
    assert checkpoint_layout(path) == "remote-code"
    scorer = ProcessRewardScorer(path, device="cpu", batch_size=4, padding_side="left")
    assert type(scorer.model).__name__ == "Qwen2ForProcessRewardModel"
    batched = scorer.score(items)
    scorer.batch_size = 1
    assert batched == pytest.approx(scorer.score(items), abs=1e-5)
    assert all(0.0 <= value <= 1.0 for value in batched)
    with pytest.raises(PRMLoadError, match="trust_remote_code is False"):
        ProcessRewardScorer(path, trust_remote_code=False)


def test_remote_code_is_copied_into_the_sessions_modules_folder_not_the_users_cache(tmp_path: Path) -> None:
    from transformers import dynamic_module_utils

    from tests.conftest import HF_MODULES

    ProcessRewardScorer(save_tiny_remote_code_prm(tmp_path / "copied"), device="cpu")
    modules = Path(dynamic_module_utils.HF_MODULES_CACHE)
    assert modules == Path(HF_MODULES) and not modules.is_relative_to(Path.home())
    assert any(modules.glob("transformers_modules/copied/**/*.py"))  # what would stay in ~/.cache otherwise


def test_tokenizer_without_separator_fails_at_load(tmp_path: Path) -> None:
    with pytest.raises(PRMLoadError, match="no step-separator token '<extra_0>'"):
        ProcessRewardScorer(save_tiny_prm(tmp_path, separator=False))


@pytest.mark.parametrize("layout", ["token-classification", "remote-code"])
def test_head_without_two_classes_fails_at_load(tmp_path: Path, layout: str) -> None:
    build = save_tiny_prm if layout == "token-classification" else save_tiny_remote_code_prm
    with pytest.raises(PRMLoadError, match="has 3 classes per token; a process reward model needs exactly two"):
        ProcessRewardScorer(build(tmp_path, num_labels=3))


def test_checkpoint_without_a_trained_head_fails_at_load(tmp_path: Path) -> None:
    with pytest.raises(PRMLoadError, match="no weights for the two-class head 'score'"):
        ProcessRewardScorer(save_tiny_causal_lm(tmp_path))


def test_registry_builds_the_scorer_from_a_spec(checkpoint: Path, tmp_path: Path) -> None:
    from reso.reward.config_error import ScorerConfigError
    from reso.reward.registry import build_scorer

    scorer = build_scorer(f"prm:{checkpoint}")
    assert isinstance(scorer, ProcessRewardScorer) and scorer.name == f"prm:{checkpoint}"
    configured = build_scorer({"kind": "prm", "checkpoint": str(checkpoint), "batch_size": 3, "device": "cpu"})
    assert isinstance(configured, ProcessRewardScorer) and configured.batch_size == 3
    with pytest.raises(ScorerConfigError, match="no step-separator token"):
        build_scorer(f"prm:{save_tiny_prm(tmp_path, separator=False)}")


def test_a_batch_out_of_gpu_memory_is_scored_in_halves(checkpoint: Path, items: list[ScoreItem],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    scorer = ProcessRewardScorer(checkpoint, device="cpu", batch_size=7)
    expected = scorer.score(items)
    forward = scorer._forward
    sizes: list[int] = []

    def limited(rows: list[list[int]]) -> list[float]:
        sizes.append(len(rows))
        if len(rows) > 2:
            raise torch.cuda.OutOfMemoryError("simulated")
        return forward(rows)

    monkeypatch.setattr(scorer, "_forward", limited)
    assert scorer.score(items) == pytest.approx(expected, abs=1e-5)
    assert sizes[0] == 7 and max(size for size in sizes[1:] if size <= 2) == 2


def test_step_scores_read_the_separator_after_each_step(checkpoint: Path, items: list[ScoreItem]) -> None:
    from reso.reward.base import StepScoring

    scorer = ProcessRewardScorer(checkpoint, device="cpu")
    assert isinstance(scorer, StepScoring)
    steps = [["Add the two numbers.", "3 + 4 = 7.", "The answer is 7."], ["7"]]
    values = scorer.score_steps(items[:2], steps)
    assert [len(v) for v in values] == [3, 1] and all(0.0 <= x <= 1.0 for v in values for x in v)
    # A one-step solution is read exactly like an answer of that text: the same input, the same score.
    alone = ScoreItem(subtask=items[1].subtask, answer="7", context=items[1].context)
    assert values[1][0] == pytest.approx(scorer.score([alone])[0], abs=1e-5)
    text, _ = render_prm_input(scorer.tokenizer, subtask="q", answer="ignored", steps=steps[0])
    assert text.count("<extra_0>") == 3 and "ignored" not in text
