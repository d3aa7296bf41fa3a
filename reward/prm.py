"""The process-reward-model scorer: a Qwen2.5-Math-PRM-style checkpoint reads each answer in context.

The input is the paper's (see docs/method.md §3): the user turn is "**Previous Steps**: " followed by the
earlier answers and the current subtask, the assistant turn is the candidate's answer with the step
separator `<extra_0>` appended, rendered with the tokenizer's chat template (plain text when it has none).
The separator goes at the end of the assistant content, before the turn's end marker, because that is
where the released Qwen2.5-Math-PRM checkpoints were trained to read a step's verdict. The score is the
class-1 probability of the head's two logits at the separator.

Items are encoded, sorted by length and run in padded batches; positions are computed from the attention
mask so left and right padding give the same scores as one-at-a-time scoring. Given a solution's steps
(`score_steps`, for ProcessBench-style evaluation), the separator follows every step, as the released
checkpoints were trained, and each step's score is the class-1 probability at its own separator.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from reso.reward.answers import extract_answer
from reso.reward.base import Score, ScoreItem, Scorer, StepScoring, failed_score
from reso.reward.prm_loading import STEP_SEPARATOR, LoadedPRM, load_prm, resolve_device

if TYPE_CHECKING:
    import torch
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

logger = logging.getLogger(__name__)

PREVIOUS_STEPS = "**Previous Steps**: "
# The system turn the released Qwen2.5-Math-PRM checkpoints were used with.
DEFAULT_SYSTEM_PROMPT = "Please reason step by step, and put your final answer within \\boxed{}."

def user_turn(subtask: str, context: str = "") -> str:
    """The paper's user turn: "**Previous Steps**: " + earlier answers + the current subtask.

    A subtask that already starts with the prefix (records in the paper's own format) is used as it is.
    """
    subtask = subtask.strip()
    if subtask.startswith(PREVIOUS_STEPS.strip()):
        return subtask
    return f"{PREVIOUS_STEPS}{context.strip() or '[]'}\n\n{subtask}"


def render_prm_input(tokenizer: PreTrainedTokenizerBase, *, subtask: str, answer: str, context: str = "",
                     system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
                     separator: str = STEP_SEPARATOR, steps: Sequence[str] | None = None) -> tuple[str, bool]:
    """The text the PRM reads for one answer, and whether it came from the chat template.

    Separators inside the texts are removed so that the appended ones are the only step boundaries: one
    after the whole answer, or, given `steps`, one after each step (the answer is then not read).
    """
    def clean(text: str) -> str:
        return text.replace(separator, " ")

    user = clean(user_turn(subtask or "", context or ""))
    if steps is not None:
        assistant = "".join(clean(step.strip()) + separator for step in steps)
    else:
        assistant = clean(answer.strip()) + separator
    if getattr(tokenizer, "chat_template", None):
        messages = [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]
        if system_prompt:
            messages.insert(0, {"role": "system", "content": system_prompt})
        # cast: with tokenize=False the template returns the text, which the library's return type omits.
        text = cast(str, tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=False))
        return text, True
    parts = [system_prompt, user, assistant] if system_prompt else [user, assistant]
    return "\n\n".join(parts), False


def encode_prm_input(tokenizer: PreTrainedTokenizerBase, text: str, from_template: bool,
                     max_length: int) -> list[int]:
    """Token ids of a rendered input, cut from the left to `max_length` so the separator survives."""
    ids = tokenizer(text, add_special_tokens=not from_template)["input_ids"]
    if len(ids) > max_length:
        logger.warning("PRM input of %d tokens cut to its last %d", len(ids), max_length)
        ids = ids[-max_length:]
    return list(ids)


def answer_problem(answer: object) -> str | None:
    """Why an answer cannot be scored (it then scores 0), or None when it can.

    The final answer is found with the project's checker (`reso.reward.answers.extract_answer`), so the
    PRM refuses the same answers the other scorers do: none at all, or a NaN / infinite value.
    """
    if not isinstance(answer, str):
        return f"answer is not text ({type(answer).__name__})"
    if not answer.strip():
        return "empty answer"
    final = extract_answer(answer)
    if final is None:
        return "no final answer or number in the answer"
    try:
        value = float(final.replace(",", ""))
    except ValueError:
        return None
    if not math.isfinite(value):
        return f"the final answer {final!r} is not a finite number"
    return None


def separator_positions(input_ids: torch.Tensor, attention_mask: torch.Tensor, sep_id: int) -> torch.Tensor:
    """Per row, the index of the last separator among real tokens; -1 where a row has none."""
    import torch

    hits = (input_ids == sep_id) & attention_mask.bool()
    columns = torch.arange(input_ids.shape[1], device=input_ids.device).expand_as(input_ids)
    return torch.where(hits, columns, torch.full_like(columns, -1)).max(dim=1).values


def head_logits(outputs: Any) -> torch.Tensor:
    """The per-token logits of a token-classification output or of a remote-code model's tuple."""
    logits = getattr(outputs, "logits", None)
    return logits if logits is not None else outputs[0]


class ProcessRewardScorer(Scorer, StepScoring):
    """Scores answers with a Qwen2.5-Math-PRM-family checkpoint: class-1 probability at `<extra_0>`.

    Supported checkpoints: `*ForTokenClassification` models with a two-label head, the released
    Qwen2.5-Math-PRM layout (`Qwen2ForProcessRewardModel` remote code, `score` MLP head with two outputs),
    and peft LoRA adapter folders over either (merged at load). See `reso.reward.prm_loading`.
    """

    def __init__(self, checkpoint: str | Path, *, device: str | None = None, dtype: Any = None,
                 batch_size: int = 16, max_length: int = 4096, padding_side: str | None = None,
                 system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
                 trust_remote_code: bool | None = None) -> None:
        """Load a checkpoint.

        Args:
            checkpoint: A local folder (or a model id already in the Hugging Face cache).
            device: "cuda", "cpu", …; None picks CUDA when available.
            dtype: None → bfloat16 on CUDA, float32 on CPU.
            batch_size: Items per forward pass.
            max_length: Longest input in tokens; longer inputs lose their beginning.
            padding_side: "left" or "right"; None keeps the tokenizer's.
            system_prompt: The system turn; None leaves it out.
            trust_remote_code: See `load_prm`.

        Raises:
            PRMLoadError: no separator token or no trained two-class head.
        """
        loaded = load_prm(checkpoint, device=device, dtype=dtype, trust_remote_code=trust_remote_code)
        self._setup(loaded, name=f"prm:{checkpoint}", batch_size=batch_size, max_length=max_length,
                    padding_side=padding_side, system_prompt=system_prompt)

    @classmethod
    def from_model(cls, model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, *, name: str = "prm",
                   device: str | None = None, dtype: Any = None, batch_size: int = 16,
                   max_length: int = 4096, padding_side: str | None = None,
                   system_prompt: str | None = DEFAULT_SYSTEM_PROMPT) -> ProcessRewardScorer:
        """A scorer over a model already in memory (benchmarks, freshly trained models)."""
        from reso.reward.prm_loading import check_head, moved, resolve_dtype, separator_id

        torch_device = resolve_device(device)
        torch_dtype = resolve_dtype(dtype, torch_device)
        check_head(model, name)
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        loaded = LoadedPRM(model=moved(model, device=torch_device, dtype=torch_dtype).eval(),
                           tokenizer=tokenizer, separator_id=separator_id(tokenizer, name),
                           device=torch_device, dtype=torch_dtype, layout="in-memory")
        scorer = cls.__new__(cls)
        scorer._setup(loaded, name=name, batch_size=batch_size, max_length=max_length,
                      padding_side=padding_side, system_prompt=system_prompt)
        return scorer

    def _setup(self, loaded: LoadedPRM, *, name: str, batch_size: int, max_length: int,
               padding_side: str | None, system_prompt: str | None) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        if padding_side not in (None, "left", "right"):
            raise ValueError(f"padding_side must be 'left' or 'right', got {padding_side!r}")
        self.name = name
        self.model = loaded.model
        self.tokenizer = loaded.tokenizer
        self.separator_id = loaded.separator_id
        self.device = loaded.device
        self.dtype = loaded.dtype
        self.batch_size = batch_size
        self.max_length = max_length
        self.padding_side = padding_side or self.tokenizer.padding_side
        self.system_prompt = system_prompt

    def encode(self, item: ScoreItem) -> list[int]:
        """The token ids the model reads for one item."""
        text, from_template = render_prm_input(self.tokenizer, subtask=item.subtask, answer=item.answer,
                                               context=item.context, system_prompt=self.system_prompt)
        return encode_prm_input(self.tokenizer, text, from_template, self.max_length)

    def score_detailed(self, items: Sequence[ScoreItem]) -> list[Score]:
        scores: list[Score | None] = [None] * len(items)
        encoded: dict[int, list[int]] = {}
        for index, item in enumerate(items):
            problem = answer_problem(item.answer)
            if problem is not None:
                scores[index] = Score(0.0, problem)
            else:
                encoded[index] = self.encode(item)
        for index, value in self.score_token_ids(encoded).items():
            scores[index] = failed_score("no finite PRM score (separator missing or NaN logits)") \
                if math.isnan(value) else Score(value)
        return [score if score is not None else failed_score("not scored") for score in scores]

    def score_steps(self, items: Sequence[ScoreItem], steps: Sequence[Sequence[str]]) -> list[list[float]]:
        """Each step's class-1 probability at the separator that follows it. Steps whose separator was cut
        off with the beginning of a too long input score 1 (nothing is known against them)."""
        import torch

        results: list[list[float]] = []
        for item, solution in zip(items, steps, strict=True):
            text, from_template = render_prm_input(self.tokenizer, subtask=item.subtask, answer="",
                                                   context=item.context, system_prompt=self.system_prompt,
                                                   steps=list(solution))
            ids = encode_prm_input(self.tokenizer, text, from_template, self.max_length)
            input_ids = torch.tensor([ids], device=self.device)
            with torch.inference_mode():
                outputs = self.model(input_ids=input_ids, attention_mask=torch.ones_like(input_ids), use_cache=False)
            logits = head_logits(outputs)[0]
            positions = (input_ids[0] == self.separator_id).nonzero().flatten()
            values = torch.softmax(logits[positions].float(), dim=-1)[:, 1].cpu().tolist()
            results.append([1.0] * (len(solution) - len(values)) + [float(v) for v in values][-len(solution):])
        return results

    def score_token_ids(self, encoded: dict[int, list[int]]) -> dict[int, float]:
        """Scores of already encoded inputs, keyed like `encoded`; batched by length, longest first."""
        order = sorted(encoded, key=lambda key: len(encoded[key]), reverse=True)
        results: dict[int, float] = {}
        for start in range(0, len(order), self.batch_size):
            keys = order[start:start + self.batch_size]
            values = self._forward_splitting([encoded[key] for key in keys])
            results.update(zip(keys, values, strict=True))
        return results

    def _forward_splitting(self, rows: list[list[int]]) -> list[float]:
        """`_forward`, halving a batch that runs out of GPU memory instead of failing the whole call."""
        import torch

        try:
            return self._forward(rows)
        except torch.cuda.OutOfMemoryError:
            if len(rows) == 1:
                raise
            torch.cuda.empty_cache()
            middle = len(rows) // 2
            logger.warning("PRM batch of %d ran out of GPU memory; scoring it in halves", len(rows))
            return self._forward_splitting(rows[:middle]) + self._forward_splitting(rows[middle:])

    def _forward(self, rows: list[list[int]]) -> list[float]:
        import torch

        batch = self.tokenizer.pad({"input_ids": rows}, padding=True, padding_side=self.padding_side,
                                   return_tensors="pt", return_attention_mask=True)
        input_ids = batch["input_ids"].to(self.device)
        attention_mask = batch["attention_mask"].to(self.device)
        # Qwen2 numbers positions 0..T-1 unless told otherwise, which would shift left-padded rows.
        position_ids = (attention_mask.long().cumsum(dim=1) - 1).clamp(min=0)
        with torch.inference_mode():
            outputs = self.model(input_ids=input_ids, attention_mask=attention_mask,
                                 position_ids=position_ids, use_cache=False)
        logits = head_logits(outputs)
        positions = separator_positions(input_ids, attention_mask, self.separator_id)
        rows_index = torch.arange(len(rows), device=logits.device)
        chosen = logits[rows_index, positions.clamp(min=0)].float()
        probabilities = torch.softmax(chosen, dim=-1)[:, 1]
        probabilities = torch.where(positions >= 0, probabilities, torch.full_like(probabilities, math.nan))
        return [float(value) for value in probabilities.cpu()]
