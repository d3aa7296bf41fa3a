"""Randomly initialised Qwen2 process reward models, an offline tokenizer and synthetic answers.

Tests and benchmarks need a PRM checkpoint without downloading one. This module builds them from a config:
a Qwen2 decoder with a two-class token-classification head (the layout `ProcessRewardScorer` loads), a
byte-level BPE tokenizer trained in milliseconds on synthetic solution text, with the ChatML special tokens
and the `<extra_0>` step separator, and math-solution-like answers of a chosen length.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from reso.reward.base import ScoreItem

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerFast, Qwen2Config

SEPARATOR = "<extra_0>"
CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
_SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

_NAMES = ["Tom", "Ana", "the baker", "the train", "a farmer", "the school", "Li", "the tank"]
_THINGS = ["apples", "tickets", "litres", "metres", "coins", "pages", "eggs", "dollars", "minutes"]
_VERBS = ["adds", "removes", "sells", "buys", "uses", "fills", "reads", "earns", "spends"]


@dataclass(frozen=True, slots=True)
class PRMSize:
    """The sizes of a randomly initialised Qwen2 PRM."""

    hidden: int
    layers: int
    heads: int
    kv_heads: int
    intermediate: int
    vocab: int | None = None  # None: the tokenizer's size
    init_std: float = 0.02  # larger in tests, so that scores spread out and small shifts show

    @property
    def description(self) -> str:
        return (f"Qwen2 hidden {self.hidden}, {self.layers} layers, {self.heads} heads "
                f"({self.kv_heads} KV), intermediate {self.intermediate}")


# Sized for fast unit tests.
TEST_SIZE = PRMSize(hidden=32, layers=2, heads=4, kv_heads=2, intermediate=64, init_std=0.3)
# The CPU benchmark's model: a small but not degenerate transformer, so that a forward pass over a few
# hundred tokens is dominated by matrix products rather than per-call Python overhead.
BENCH_CPU_SIZE = PRMSize(hidden=256, layers=4, heads=4, kv_heads=2, intermediate=1024)
# Qwen2-0.5B's shape (vocabulary 151,936): about 0.5 billion parameters with the two-class head.
QWEN2_0_5B_SIZE = PRMSize(hidden=896, layers=24, heads=14, kv_heads=2, intermediate=4864, vocab=151_936)


def _sentence(rng: random.Random) -> str:
    a, b = rng.randint(2, 999), rng.randint(2, 99)
    op, result = rng.choice([("+", a + b), ("-", a - b), ("\\times", a * b)])
    name, thing, verb = rng.choice(_NAMES), rng.choice(_THINGS), rng.choice(_VERBS)
    templates = [
        f"{name.capitalize()} starts with {a} {thing} and {verb} {b} more, so we compute {a} {op} {b} = {result}.",
        f"Since each group holds {b} {thing}, the total is ${a} {op} {b} = {result}$ {thing}.",
        f"We substitute Answer[{rng.randint(1, 5)}] = {a} into the expression and get {result}.",
        f"Checking the units: {result} {thing} is consistent with the {b} {thing} per step.",
        f"Therefore the intermediate value is \\frac{{{a}}}{{{b}}} \\approx {a / b:.3f}.",
    ]
    return rng.choice(templates)


def synthetic_answer(rng: random.Random, sentences: int) -> str:
    """A math-solution-like answer of `sentences` steps, ending with a boxed number."""
    steps = [f"Step {i + 1}: {_sentence(rng)}" for i in range(sentences)]
    steps.append(f"The answer is therefore \\boxed{{{rng.randint(1, 5000)}}}.")
    return "\n".join(steps)


def synthetic_corpus(n: int = 400, seed: int = 0) -> list[str]:
    """Training text for the offline tokenizer."""
    rng = random.Random(seed)
    return [synthetic_answer(rng, rng.randint(1, 6)) for _ in range(n)]


def build_tokenizer(*, vocab_size: int = 1024, chat_template: bool = True, separator: bool = True,
                    padding_side: str = "right", seed: int = 0) -> PreTrainedTokenizerFast:
    """A byte-level BPE tokenizer trained offline on synthetic solution text.

    Args:
        vocab_size: Target vocabulary size of the BPE model (special tokens come on top).
        chat_template: Give the tokenizer a ChatML chat template; without it callers must fall back to
            plain text.
        separator: Add `<extra_0>` as a special token (a PRM checkpoint without it must fail to load).
        padding_side: "right" or "left".
        seed: Seed of the synthetic corpus.

    Returns:
        A `PreTrainedTokenizerFast` with `<|endoftext|>` as end-of-text and padding token.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(_SPECIAL_TOKENS),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    backend.train_from_iterator(synthetic_corpus(seed=seed), trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<|endoftext|>",
                                        pad_token="<|endoftext|>", padding_side=padding_side)
    chat_tokens = ["<|im_start|>", "<|im_end|>"] + ([SEPARATOR] if separator else [])
    tokenizer.add_special_tokens({"additional_special_tokens": chat_tokens})
    if chat_template:
        tokenizer.chat_template = CHATML_TEMPLATE
    return tokenizer


def qwen2_prm_config(size: PRMSize, *, vocab_size: int, num_labels: int = 2) -> Qwen2Config:
    """A Qwen2 config for a token-classification PRM of the given size."""
    from transformers import Qwen2Config

    config = Qwen2Config(
        vocab_size=size.vocab or vocab_size,
        hidden_size=size.hidden,
        num_hidden_layers=size.layers,
        num_attention_heads=size.heads,
        num_key_value_heads=size.kv_heads,
        intermediate_size=size.intermediate,
        max_position_embeddings=4096,
        initializer_range=size.init_std,
        tie_word_embeddings=False,
        pad_token_id=0,
        architectures=["Qwen2ForTokenClassification"],
    )
    config.num_labels = num_labels  # a property of every config, not a field of Qwen2Config's own
    return config


def build_prm_model(size: PRMSize, tokenizer: PreTrainedTokenizerFast, *, num_labels: int = 2,
                    seed: int = 0) -> PreTrainedModel:
    """A randomly initialised `Qwen2ForTokenClassification`, in evaluation mode, on the CPU in float32."""
    import torch
    from transformers import Qwen2ForTokenClassification

    config = qwen2_prm_config(size, vocab_size=len(tokenizer), num_labels=num_labels)
    config.pad_token_id = tokenizer.pad_token_id
    torch.manual_seed(seed)
    return Qwen2ForTokenClassification(config).eval()


def save_prm_checkpoint(out_dir: Path, size: PRMSize = TEST_SIZE, *, num_labels: int = 2,
                        chat_template: bool = True, separator: bool = True, padding_side: str = "right",
                        seed: int = 0) -> Path:
    """Write a random Qwen2 token-classification PRM and its tokenizer with `save_pretrained`.

    Returns:
        `out_dir`, loadable by `ProcessRewardScorer` (unless built without separator or with a head of
        other than two classes, the two load-time errors).
    """
    out_dir = Path(out_dir)
    tokenizer = build_tokenizer(chat_template=chat_template, separator=separator, padding_side=padding_side)
    model = build_prm_model(size, tokenizer, num_labels=num_labels, seed=seed)
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    return out_dir


def synthetic_items(n: int, *, sentences: tuple[int, int] = (12, 24), seed: int = 0) -> list[ScoreItem]:
    """`n` score items with a subtask, one earlier answer as context, and an answer of varied length.

    With the default 12–24 sentences an answer is roughly 250–550 tokens of the offline tokenizer.
    """
    rng = random.Random(seed)
    items = []
    for i in range(n):
        context = f"Answer[1] = {rng.randint(1, 500)}"
        subtask = (f"your current sub-question: {_sentence(rng)} How many {rng.choice(_THINGS)} are left? "
                   f"The answer is recorded as Answer[{i % 5 + 2}].")
        answer = synthetic_answer(rng, rng.randint(*sentences))
        items.append(ScoreItem(subtask=subtask, answer=answer, context=context, agent_id=f"agent-{i % 4}"))
    return items
