"""LoRA fine-tuning of a process reward model on labelled answers: the paper's CRM recipe.

Defaults follow docs/method.md §3 and the authors' training script: LoRA rank 8, alpha 32, dropout 0.1 on
the q/v projections with the two-class head trained in full (`modules_to_save`), context 4,096, effective
batch 128, learning rate 1e-4, weight decay 0.01, 5 epochs, bf16 on a GPU. Each record is rendered exactly
as `ProcessRewardScorer` renders it; the loss is cross-entropy at the separator token only (every other
position is labelled -100). The result is a folder `ProcessRewardScorer` loads: merged weights by default,
or the LoRA adapter alone.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from transformers import TrainerCallback

from reso.reward.labelled_records import LabelledRecord
from reso.reward.prm import DEFAULT_SYSTEM_PROMPT, encode_prm_input, head_logits, render_prm_input
from reso.reward.prm_loading import load_prm, moved

if TYPE_CHECKING:
    import torch
    from peft import PeftModel
    from transformers import PreTrainedModel, PreTrainedTokenizerBase, TrainingArguments
    from transformers.trainer_utils import TrainOutput

logger = logging.getLogger(__name__)

IGNORE_INDEX = -100
TRAINING_INFO = "prm_training.json"


def encode_record(tokenizer: PreTrainedTokenizerBase, record: LabelledRecord, separator_id: int, *,
                  max_length: int, system_prompt: str | None = DEFAULT_SYSTEM_PROMPT) -> dict[str, list[int]]:
    """Token ids, attention mask and labels of one record: its label at the separator, -100 elsewhere."""
    text, from_template = render_prm_input(tokenizer, subtask=record.instruction, answer=record.answer,
                                           context=record.context, system_prompt=system_prompt)
    ids = encode_prm_input(tokenizer, text, from_template, max_length)
    labels = [IGNORE_INDEX] * len(ids)
    labels[len(ids) - 1 - ids[::-1].index(separator_id)] = record.label
    return {"input_ids": ids, "attention_mask": [1] * len(ids), "labels": labels}


def separator_loss(outputs: Any, labels: torch.Tensor, num_items_in_batch: Any = None) -> torch.Tensor:
    """Cross-entropy over the labelled (separator) positions, normalised over the accumulated batch."""
    import torch.nn.functional as F

    logits = head_logits(outputs).float()
    labels = labels.to(logits.device)
    total = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1),
                            ignore_index=IGNORE_INDEX, reduction="sum")
    count = num_items_in_batch if num_items_in_batch is not None else (labels != IGNORE_INDEX).sum()
    return total / max(int(count), 1)


class _LogCallback(TrainerCallback):
    """Sends the Trainer's loss logs to `logging` instead of stdout."""

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None,
               **kwargs: Any) -> None:
        if logs:
            logger.info("step %d: %s", state.global_step, logs)


def _check_records(records: Sequence[LabelledRecord]) -> None:
    if not records:
        raise ValueError("train_prm: no training records")
    for index, record in enumerate(records):
        if record.label not in (0, 1):
            raise ValueError(f"train_prm: record {index} has label {record.label!r}; labels must be 0 or 1")
        if not isinstance(record.answer, str) or not record.answer.strip():
            raise ValueError(f"train_prm: record {index} has an empty answer")


def train_prm(records: Sequence[LabelledRecord], out_dir: Path, *, base: str | Path, epochs: float = 5,
              lr: float = 1e-4, lora_r: int = 8, lora_alpha: int = 32, lora_dropout: float = 0.1,
              target_modules: Sequence[str] = ("q_proj", "v_proj"), effective_batch: int = 128,
              per_device_batch: int = 2, max_length: int = 4096, bf16: bool | Literal["auto"] = "auto",
              max_steps: int | None = None, seed: int = 0, weight_decay: float = 0.01, merge: bool = True,
              gradient_checkpointing: bool = False, system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
              logging_steps: int = 10) -> Path:
    """Fine-tune a PRM checkpoint with LoRA on labelled answers and save a checkpoint the scorer loads.

    Args:
        records: Labelled answers; `instruction` is the subtask, `context` the earlier answers.
        out_dir: Output folder (created); holds the checkpoint and `prm_training.json`.
        base: The PRM to start from (any checkpoint `ProcessRewardScorer` loads).
        epochs: Passes over the records (ignored when `max_steps` is set).
        lr: Learning rate (AdamW, linear decay).
        lora_r, lora_alpha, lora_dropout, target_modules: The LoRA adapter.
        effective_batch: Records per optimiser step; reached by gradient accumulation.
        per_device_batch: Records per forward pass.
        max_length: Longest input in tokens (longer ones lose their beginning).
        bf16: Mixed precision; "auto" turns it on when a CUDA GPU supports bfloat16.
        max_steps: Stop after this many optimiser steps.
        seed: Seed of the shuffling, dropout and adapter initialisation.
        weight_decay: AdamW weight decay (0.01 in the authors' script).
        merge: Save merged full weights (True) or only the adapter, which keeps a reference to `base`.
        gradient_checkpointing: Trade compute for memory (7B models on one GPU).
        system_prompt: The system turn, as in the scorer.
        logging_steps: Log the loss every this many steps.

    Returns:
        `out_dir`.

    Raises:
        ValueError: no records, a label other than 0/1, an empty answer, or bad batch sizes.
        PRMLoadError: `base` is not a usable PRM checkpoint.
    """
    import torch
    from transformers import set_seed

    _check_records(records)
    if effective_batch < 1 or per_device_batch < 1:
        raise ValueError("train_prm: effective_batch and per_device_batch must be at least 1")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    set_seed(seed)

    use_cuda = torch.cuda.is_available()
    use_bf16 = (use_cuda and torch.cuda.is_bf16_supported()) if bf16 == "auto" else bool(bf16)
    # Master weights stay in float32; bf16 is applied by autocast inside the Trainer.
    loaded = load_prm(base, device="cuda" if use_cuda else "cpu", dtype=torch.float32)
    tokenizer, model = loaded.tokenizer, loaded.model
    saved_padding_side = tokenizer.padding_side
    tokenizer.padding_side = "right"  # positions then need no correction during training

    dataset = [encode_record(tokenizer, record, loaded.separator_id, max_length=max_length,
                             system_prompt=system_prompt) for record in records]
    head = "score" if hasattr(model, "score") else "classifier"
    adapted = _with_lora(model, head, r=lora_r, alpha=lora_alpha, dropout=lora_dropout,
                         target_modules=target_modules, gradient_checkpointing=gradient_checkpointing)
    accumulation = max(1, math.ceil(effective_batch / per_device_batch))
    arguments = _training_arguments(
        out_dir / "trainer", epochs=epochs, max_steps=max_steps, per_device_batch=per_device_batch,
        accumulation=accumulation, lr=lr, weight_decay=weight_decay, bf16=use_bf16, use_cuda=use_cuda,
        gradient_checkpointing=gradient_checkpointing, logging_steps=logging_steps, seed=seed)
    result, loss_log = _train(adapted, arguments, dataset, tokenizer)

    tokenizer.padding_side = saved_padding_side
    try:  # nothing is checkpointed during training, so the Trainer's folder is normally empty
        (out_dir / "trainer").rmdir()
    except OSError:
        pass
    _save_checkpoint(adapted, tokenizer, out_dir, merge=merge, bf16=use_bf16)
    info = {
        "base": str(base),
        "merged": merge,
        "records": len(records),
        "positives": sum(record.label for record in records),
        "steps": result.global_step,
        "train_loss": result.training_loss,
        "settings": {"epochs": epochs, "lr": lr, "lora_r": lora_r, "lora_alpha": lora_alpha,
                     "lora_dropout": lora_dropout, "target_modules": list(target_modules),
                     "modules_to_save": [head], "effective_batch": per_device_batch * accumulation,
                     "per_device_batch": per_device_batch, "gradient_accumulation": accumulation,
                     "max_length": max_length, "bf16": use_bf16, "max_steps": max_steps, "seed": seed,
                     "weight_decay": weight_decay, "system_prompt": system_prompt},
        "loss_log": loss_log,
    }
    (out_dir / TRAINING_INFO).write_text(json.dumps(info, indent=2), encoding="utf-8")
    logger.info("trained PRM saved to %s (%d steps, loss %.4f)", out_dir, result.global_step,
                result.training_loss)
    return out_dir


def _with_lora(model: PreTrainedModel, head: str, *, r: int, alpha: int, dropout: float,
               target_modules: Sequence[str], gradient_checkpointing: bool) -> PeftModel:
    """`model` with a LoRA adapter on `target_modules` and its classification `head` trained in full."""
    from peft import LoraConfig, get_peft_model

    lora = LoraConfig(r=r, lora_alpha=alpha, lora_dropout=dropout, target_modules=list(target_modules),
                      modules_to_save=[head])
    adapted = get_peft_model(model, lora)
    if gradient_checkpointing:
        adapted.enable_input_require_grads()
    return adapted


def _training_arguments(trainer_dir: Path, *, epochs: float, max_steps: int | None, per_device_batch: int,
                        accumulation: int, lr: float, weight_decay: float, bf16: bool, use_cuda: bool,
                        gradient_checkpointing: bool, logging_steps: int, seed: int) -> TrainingArguments:
    """The Trainer's arguments: no checkpoints saved, no reports, no progress bar."""
    from transformers import TrainingArguments

    # transformers 5 renamed gradient_checkpointing; pass whichever this version knows, only when asked.
    argument_names = {field.name for field in dataclasses.fields(TrainingArguments)}
    flag = ("activation_checkpointing" if "activation_checkpointing" in argument_names
            else "gradient_checkpointing")
    checkpointing: dict[str, Any] = {flag: True} if gradient_checkpointing else {}
    return TrainingArguments(
        output_dir=str(trainer_dir),
        num_train_epochs=epochs,
        max_steps=max_steps if max_steps is not None else -1,
        per_device_train_batch_size=per_device_batch,
        gradient_accumulation_steps=accumulation,
        learning_rate=lr,
        weight_decay=weight_decay,
        bf16=bf16,
        use_cpu=not use_cuda,
        **checkpointing,
        logging_steps=logging_steps,
        save_strategy="no",
        report_to=[],
        seed=seed,
        remove_unused_columns=False,
        dataloader_pin_memory=use_cuda,
        disable_tqdm=True,
    )


def _train(adapted: PeftModel, arguments: TrainingArguments, dataset: list[dict[str, list[int]]],
           tokenizer: PreTrainedTokenizerBase) -> tuple[TrainOutput, list[dict[str, Any]]]:
    """Train with the separator loss; the Trainer's result and its loss log."""
    from transformers import DataCollatorForTokenClassification, Trainer
    from transformers.trainer_callback import PrinterCallback

    trainer = Trainer(model=adapted, args=arguments, train_dataset=dataset,
                      data_collator=DataCollatorForTokenClassification(tokenizer, label_pad_token_id=IGNORE_INDEX),
                      compute_loss_func=separator_loss)
    # The Trainer prints its logs to stdout, where CLI callers write their JSON; send them to logging.
    trainer.remove_callback(PrinterCallback)
    trainer.add_callback(_LogCallback())
    result = trainer.train()
    return result, [entry for entry in trainer.state.log_history if "loss" in entry]


def _save_checkpoint(adapted: PeftModel, tokenizer: PreTrainedTokenizerBase, out_dir: Path, *, merge: bool,
                     bf16: bool) -> None:
    """Save what `ProcessRewardScorer` loads: merged weights (bfloat16 when trained under it), or the adapter
    alone; and the tokenizer."""
    import torch

    if merge:
        # cast: peft types the merged model as a torch Module; it is the base model, adapter folded in.
        merged = cast("PreTrainedModel", adapted.merge_and_unload())
        merged.config.pad_token_id = tokenizer.pad_token_id
        if bf16:  # trained under bf16 autocast: store as the released checkpoints are, at half the size
            merged = moved(merged, dtype=torch.bfloat16)
        merged.save_pretrained(out_dir)
    else:
        adapted.save_pretrained(str(out_dir))
    tokenizer.save_pretrained(out_dir)
