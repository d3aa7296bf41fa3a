"""Tiny, randomly initialised process-reward-model checkpoints for offline tests.

Everything is built from a config and saved with `save_pretrained` into a test's tmp_path; nothing is
downloaded. The builders behind them live in `reso.evals.bench.synthetic_prm` (the benchmarks use them
too); this module adds the test-only variants: the released Qwen2.5-Math-PRM layout as remote code, and a
checkpoint without a classification head.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from reso.evals.bench.synthetic_prm import (
    TEST_SIZE,
    build_tokenizer,
    qwen2_prm_config,
    save_prm_checkpoint,
    synthetic_items,
)

__all__ = [
    "save_tiny_causal_lm",
    "save_tiny_prm",
    "save_tiny_remote_code_prm",
    "synthetic_items",
    "tiny_tokenizer",
]

# A stand-in for the released `Qwen2ForProcessRewardModel` class (custom code shipped with the
# checkpoint): a Qwen2 decoder and a two-layer MLP `score` head, returning a plain tuple of logits.
REMOTE_CODE = '''"""Test stand-in for the Qwen2ForProcessRewardModel remote-code layout."""
from torch import nn
from transformers import Qwen2Config, Qwen2Model, Qwen2PreTrainedModel


class Qwen2RMConfig(Qwen2Config):
    model_type = "qwen2_rm_test"


class Qwen2ForProcessRewardModel(Qwen2PreTrainedModel):
    config_class = Qwen2RMConfig

    def __init__(self, config):
        super().__init__(config)
        self.num_labels = config.num_labels
        self.model = Qwen2Model(config)
        self.score = nn.Sequential(nn.Linear(config.hidden_size, config.hidden_size), nn.ReLU(),
                                   nn.Linear(config.hidden_size, config.num_labels))
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, use_cache=None, **kwargs):
        hidden = self.model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                            use_cache=use_cache).last_hidden_state
        return (self.score(hidden),)
'''


def tiny_tokenizer(*, chat_template: bool = True, separator: bool = True, padding_side: str = "right"):
    """The offline BPE tokenizer (ChatML template and `<extra_0>` unless switched off)."""
    return build_tokenizer(chat_template=chat_template, separator=separator, padding_side=padding_side)


def save_tiny_prm(path: Path, *, num_labels: int = 2, chat_template: bool = True, separator: bool = True,
                  padding_side: str = "right", seed: int = 0) -> Path:
    """A tiny `Qwen2ForTokenClassification` PRM and its tokenizer, saved to `path`."""
    return save_prm_checkpoint(Path(path), TEST_SIZE, num_labels=num_labels, chat_template=chat_template,
                               separator=separator, padding_side=padding_side, seed=seed)


def save_tiny_remote_code_prm(path: Path, *, num_labels: int = 2, seed: int = 0) -> Path:
    """A tiny checkpoint in the released Qwen2.5-Math-PRM layout: remote code named in `auto_map`."""
    import torch

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    (path / "modeling_qwen2_rm.py").write_text(REMOTE_CODE, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"tiny_qwen2_rm_{seed}", path / "modeling_qwen2_rm.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    tokenizer = tiny_tokenizer()
    base = qwen2_prm_config(TEST_SIZE, vocab_size=len(tokenizer), num_labels=num_labels).to_dict()
    for key in ("model_type", "architectures", "transformers_version"):
        base.pop(key, None)
    config = module.Qwen2RMConfig(**base)
    config.pad_token_id = tokenizer.pad_token_id
    config.architectures = ["Qwen2ForProcessRewardModel"]
    config.auto_map = {"AutoConfig": "modeling_qwen2_rm.Qwen2RMConfig",
                       "AutoModel": "modeling_qwen2_rm.Qwen2ForProcessRewardModel"}
    torch.manual_seed(seed)
    module.Qwen2ForProcessRewardModel(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def save_tiny_causal_lm(path: Path, seed: int = 0) -> Path:
    """A tiny Qwen2 causal LM (no classification head) with the PRM tokenizer: not a PRM."""
    import torch
    from transformers import Qwen2ForCausalLM

    tokenizer = tiny_tokenizer()
    config = qwen2_prm_config(TEST_SIZE, vocab_size=len(tokenizer))
    config.architectures = ["Qwen2ForCausalLM"]
    torch.manual_seed(seed)
    Qwen2ForCausalLM(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return Path(path)
