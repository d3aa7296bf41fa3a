"""LLM judge scorer: a chat model is asked whether the candidate's answer to the subtask is right.

The verdict becomes a probability in the best way the model allows, chosen once per scorer:

1. logprobs: models that can return token log-probabilities (OpenAI-compatible chat models expose a
   `logprobs` setting) are asked for a one-word Yes/No and scored P(yes) / (P(yes) + P(no)) over the
   top alternatives of the first verdict token;
2. structured output: models with tool calling fill a `Verdict` (correct, confidence) and score
   `confidence` when correct, `1 - confidence` when not;
3. text: anything else answers in words; a JSON verdict, "Yes"/"No" and a stated confidence are read.

Replies that carry logprobs are read from them whatever the mode. Calls go out as one `batch`/`abatch`
with a concurrency limit. Empty answers score 0 without a call; a failed call or an unreadable verdict
scores the neutral 0.5 with the reason, since it says nothing about the answer.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, ValidationError

from reso.reward.base import Score, ScoreItem, Scorer, failed_score

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage
    from langchain_core.runnables import Runnable, RunnableConfig

JudgeMode = Literal["auto", "logprobs", "structured", "text"]
NEUTRAL = 0.5

JUDGE_SYSTEM_PROMPT = (
    "You grade one step of a larger step-by-step solution. Decide whether the candidate's final answer "
    "to the subtask is correct. Answers of earlier steps are given as context: take them as true and "
    "check that the candidate used them correctly. Judge the final answer, not the style."
)
_ASK_WORD = "Is the candidate's final answer correct? Reply with one word: Yes or No."
_ASK_STRUCTURED = "Is the candidate's final answer correct? Give your verdict and your confidence in it."

_YES = {"yes", "correct", "true", "right"}
_NO = {"no", "incorrect", "false", "wrong"}
_PROSE_VERDICT = re.compile(r"\b(not\s+)?(correct|incorrect|wrong)\b", re.IGNORECASE)
_LEADING_VERDICT = re.compile(
    r"^[\s*_#>\"'`]*(?:verdict\s*:\s*)?(not\s+)?(yes|no|correct|incorrect|true|false|right|wrong)\b",
    re.IGNORECASE,
)
_CONFIDENCE = re.compile(
    r"\b(?:confidence|probability|certainty|likelihood)\b\D{0,15}?(\d+(?:\.\d+)?)\s*(%)?", re.IGNORECASE
)
_JSON_OBJECT = re.compile(r"\{[^{}]*\}")
_SECRET = re.compile(
    r"(?:sk|pk|rk)-[A-Za-z0-9_\-]{8,}|Bearer\s+\S+|api[_-]?key\S*\s*[:=]\s*\S+", re.IGNORECASE
)


class Verdict(BaseModel):
    """The judge's structured verdict on one candidate answer."""

    correct: bool = Field(description="Whether the candidate's final answer to the subtask is correct.")
    confidence: float = Field(ge=0.0, le=1.0, description="How sure you are of this verdict, from 0 to 1.")


class JudgeScorer(Scorer):
    """Asks a LangChain chat model for a verdict on each candidate answer."""

    name = "judge"

    def __init__(
        self,
        model: BaseChatModel,
        *,
        mode: JudgeMode = "auto",
        max_concurrency: int = 8,
        top_logprobs: int = 5,
        system_prompt: str = JUDGE_SYSTEM_PROMPT,
        max_answer_chars: int = 12_000,
    ) -> None:
        """Wrap a chat model as a judge.

        Args:
            model: Any LangChain chat model (real endpoint, local model or a scripted fake).
            mode: How to read the verdict; "auto" picks logprobs, then structured output, then text.
            max_concurrency: Most judge calls in flight at once.
            top_logprobs: Alternatives requested per token when reading logprobs.
            system_prompt: The judge's instructions.
            max_answer_chars: Longer answers are cut to their last this-many characters.
        """
        if mode not in ("auto", "logprobs", "structured", "text"):
            raise ValueError(f"mode must be auto, logprobs, structured or text, got {mode!r}")
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency}")
        self.model = model
        self.max_concurrency = max_concurrency
        self.system_prompt = system_prompt
        self.max_answer_chars = max_answer_chars
        self.mode, self._runnable = _reading_plan(model, mode, top_logprobs)

    def score_detailed(self, items: Sequence[ScoreItem]) -> list[Score]:
        asked, prompts, scores = self._prepare(items)
        if prompts:
            replies = self._runnable.batch(prompts, config=self._config(), return_exceptions=True)
            for index, reply in zip(asked, replies, strict=True):
                scores[index] = read_verdict(reply)
        return scores

    async def ascore_detailed(self, items: Sequence[ScoreItem]) -> list[Score]:
        """Async `score_detailed`: the calls go out through `abatch`."""
        asked, prompts, scores = self._prepare(items)
        if prompts:
            replies = await self._runnable.abatch(prompts, config=self._config(), return_exceptions=True)
            for index, reply in zip(asked, replies, strict=True):
                scores[index] = read_verdict(reply)
        return scores

    def messages(self, item: ScoreItem) -> list[BaseMessage]:
        """The judge's prompt for one item."""
        from langchain_core.messages import HumanMessage, SystemMessage

        answer = item.answer[-self.max_answer_chars :]
        ask = _ASK_STRUCTURED if self.mode == "structured" else _ASK_WORD
        context = item.context.strip() or "(none)"
        user = f"Earlier steps and their answers:\n{context}\n\nSubtask:\n{item.subtask}\n\n"
        user += f"Candidate answer:\n{answer}\n\n{ask}"
        return [SystemMessage(self.system_prompt), HumanMessage(user)]

    def _prepare(self, items: Sequence[ScoreItem]) -> tuple[list[int], list[list[BaseMessage]], list[Score]]:
        scores = [Score(0.0, "empty answer")] * len(items)
        asked = [i for i, item in enumerate(items) if isinstance(item.answer, str) and item.answer.strip()]
        return asked, [self.messages(items[i]) for i in asked], scores

    def _config(self) -> RunnableConfig:
        return {"max_concurrency": self.max_concurrency, "run_name": "reso-judge"}


def load_judge(
    model_spec: str | None = None,
    *,
    chat_model: BaseChatModel | None = None,
    mode: JudgeMode = "auto",
    max_concurrency: int = 8,
    top_logprobs: int = 5,
    system_prompt: str = JUDGE_SYSTEM_PROMPT,
    max_answer_chars: int = 12_000,
) -> JudgeScorer:
    """Build a judge from a model spec ("openai:gpt-4o-mini", "replay:…", …) or a ready chat model.

    This is the registry's factory for "judge:<model spec>" (a ready model comes in as the `chat_model`
    dependency); the spec goes through the agents layer's `load_chat_model`, so API keys come from the
    environment variables the spec names.
    """
    if model_spec:
        from reso.agents.adapters.loader import load_chat_model

        chat_model = load_chat_model(model_spec)
    if chat_model is None:
        raise ValueError("the judge needs a model: write 'judge:<provider:model>' or pass chat_model=")
    return JudgeScorer(
        chat_model,
        mode=mode,
        max_concurrency=max_concurrency,
        top_logprobs=top_logprobs,
        system_prompt=system_prompt,
        max_answer_chars=max_answer_chars,
    )


def read_verdict(reply: Any) -> Score:
    """Turn one judge reply (message, structured result or exception) into a Score.

    Args:
        reply: An AIMessage, the `{"raw", "parsed"}` dict of `with_structured_output(include_raw=True)`,
            a `Verdict`, or the exception the call raised.
    """
    if isinstance(reply, BaseException):
        return failed_score(f"judge call failed: {type(reply).__name__}: {_redact(str(reply))[:200]}")
    if isinstance(reply, dict) and "raw" in reply:
        parsed = reply.get("parsed")
        if isinstance(parsed, Verdict):
            return _from_verdict(parsed)
        reply = reply["raw"]
    if isinstance(reply, Verdict):
        return _from_verdict(reply)
    probability = yes_probability(reply)
    if probability is not None:
        return Score(probability)
    text = _text_of(reply)
    verdict = parse_verdict_text(text)
    if verdict is None:
        return failed_score(f"unreadable judge verdict: {_redact(text)[:120]!r}")
    return Score(verdict)


def yes_probability(message: Any) -> float | None:
    """P(yes) / (P(yes) + P(no)) from the first verdict token's logprobs, or None when there are none."""
    metadata = getattr(message, "response_metadata", None) or {}
    logprobs = metadata.get("logprobs")
    entries = logprobs.get("content") if isinstance(logprobs, dict) else logprobs
    if not isinstance(entries, list):
        return None
    for entry in entries:
        if not isinstance(entry, dict) or not _token_word(entry.get("token")):
            continue
        options = entry.get("top_logprobs") or [entry]
        yes = no = 0.0
        for option in options:
            if not isinstance(option, dict):
                continue
            word, logprob = _token_word(option.get("token")), option.get("logprob")
            if not isinstance(logprob, int | float) or not math.isfinite(logprob):
                continue
            if word in _YES:
                yes += math.exp(logprob)
            elif word in _NO:
                no += math.exp(logprob)
        return yes / (yes + no) if yes + no > 0 else None
    return None


def parse_verdict_text(text: str) -> float | None:
    """The probability of "correct" stated in free text, or None when no verdict can be read.

    A JSON object with `correct` (and `confidence`) wins; otherwise the first verdict word ("Yes",
    "incorrect", "not correct", ...) with a stated confidence if any ("confidence: 80%"), else certainty.
    """
    for candidate in _JSON_OBJECT.findall(text):
        try:
            data = json.loads(candidate)
            if isinstance(data, dict) and "correct" in data:
                data.setdefault("confidence", 1.0)
                return _from_verdict(Verdict.model_validate(data)).value
        except (json.JSONDecodeError, ValidationError):
            continue
    # A leading verdict word wins; in prose only the last "correct"/"incorrect"/"wrong" counts, since
    # "no" and "right" also turn up in ordinary sentences.
    word = _LEADING_VERDICT.match(text) or next(reversed(list(_PROSE_VERDICT.finditer(text))), None)
    if word is None:
        return None
    correct = (word.group(2).lower() in _YES) != bool(word.group(1))
    confidence = 1.0
    stated = _CONFIDENCE.search(text)
    if stated:
        value = float(stated.group(1))
        value = value / 100 if stated.group(2) or value > 1 else value
        if 0.0 <= value <= 1.0:
            confidence = value
    return confidence if correct else 1.0 - confidence


def _reading_plan(model: Any, mode: JudgeMode, top_logprobs: int) -> tuple[str, Runnable]:
    supports_logprobs = "logprobs" in (getattr(type(model), "model_fields", None) or {})
    if mode == "logprobs" or (mode == "auto" and supports_logprobs):
        runnable = model.bind(logprobs=True, top_logprobs=top_logprobs) if supports_logprobs else model
        return "logprobs", runnable
    if mode in ("auto", "structured"):
        try:
            return "structured", model.with_structured_output(Verdict, include_raw=True)
        except NotImplementedError:
            if mode == "structured":
                raise ValueError(
                    f"{type(model).__name__} has no structured output (tool calling); use mode='text'"
                ) from None
    return "text", model


def _from_verdict(verdict: Verdict) -> Score:
    return Score(verdict.confidence if verdict.correct else 1.0 - verdict.confidence)


def _token_word(token: Any) -> str:
    return re.sub(r"[^a-z]", "", token.lower()) if isinstance(token, str) else ""


def _text_of(message: Any) -> str:
    content = getattr(message, "content", message)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(part if isinstance(part, str) else str(part.get("text", "")) for part in content)
    return str(content)


def _redact(text: str) -> str:
    return _SECRET.sub("[redacted]", text)
