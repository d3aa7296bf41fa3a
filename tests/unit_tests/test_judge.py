"""The LLM judge on scripted fake chat models: logprobs, structured output, text, batching, failures."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from reso.reward.base import ScoreItem
from reso.reward.judge import JudgeScorer, Verdict, parse_verdict_text, read_verdict, yes_probability


class ScriptedJudge(BaseChatModel):
    """Answers each prompt with `reply(prompt_text)`; records prompts and the most calls in flight."""

    reply: Callable[[str], AIMessage]
    prompts: list[str] = Field(default_factory=list)
    in_flight: int = 0
    most_in_flight: int = 0
    lock: Any = Field(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "scripted-judge"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        with self.lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
            self.prompts.append(str(messages[-1].content))
        time.sleep(0.005)  # lets the batch overlap calls; nothing asserts on time
        try:
            message = self.reply(str(messages[-1].content))
        finally:
            with self.lock:
                self.in_flight -= 1
        return ChatResult(generations=[ChatGeneration(message=message)])


class LogprobJudge(ScriptedJudge):
    """A model that, like OpenAI-compatible chat models, has a `logprobs` setting."""

    logprobs: bool | None = None
    bound_kwargs: list[dict[str, Any]] = Field(default_factory=list)

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        self.bound_kwargs.append(kw)
        return super()._generate(messages, stop, run_manager)


class ToolCallingJudge(ScriptedJudge):
    """A model with tool calling, so `with_structured_output` works through `bind_tools`."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


def _logprob_message(yes: float, no: float) -> AIMessage:
    top = [{"token": "Yes", "logprob": math.log(yes)}, {"token": " No", "logprob": math.log(no)}]
    content = [
        {"token": "Yes" if yes >= no else "No", "logprob": math.log(max(yes, no)), "top_logprobs": top}
    ]
    return AIMessage(
        content="Yes" if yes >= no else "No", response_metadata={"logprobs": {"content": content}}
    )


def _tool_message(correct: bool, confidence: float) -> AIMessage:
    call = {"name": "Verdict", "args": {"correct": correct, "confidence": confidence}, "id": "call-1"}
    return AIMessage(content="", tool_calls=[call])


def _items() -> list[ScoreItem]:
    return [
        ScoreItem(subtask="What is 9 * 2?", answer="9 * 2 = 18", context="Answer[0] = 9"),
        ScoreItem(subtask="What is 9 * 2?", answer="9 * 2 = 20", context="Answer[0] = 9"),
        ScoreItem(subtask="What is 9 * 2?", answer="  "),
    ]


def test_reads_the_yes_probability_from_logprobs() -> None:
    model = LogprobJudge(
        reply=lambda p: _logprob_message(0.8, 0.2) if "= 18" in p else _logprob_message(0.1, 0.3)
    )
    judge = JudgeScorer(model)
    scores = judge.score_detailed(_items())
    assert judge.mode == "logprobs"
    assert [s.value for s in scores] == pytest.approx([0.8, 0.25, 0.0])
    assert scores[2].reason == "empty answer"
    assert len(model.prompts) == 2
    assert all(
        kwargs.get("logprobs") is True and kwargs.get("top_logprobs") == 5 for kwargs in model.bound_kwargs
    )
    assert "Answer[0] = 9" in model.prompts[0] and "Reply with one word" in model.prompts[0]


def test_reads_structured_verdicts() -> None:
    model = ToolCallingJudge(
        reply=lambda p: _tool_message(True, 0.9) if "= 18" in p else _tool_message(False, 0.7)
    )
    judge = JudgeScorer(model)
    assert judge.mode == "structured"
    assert judge.score(_items()) == pytest.approx([0.9, 0.3, 0.0])
    assert "confidence" in model.prompts[0]


def test_falls_back_to_text_for_models_without_tools_or_logprobs() -> None:
    model = GenericFakeChatModel(messages=iter([AIMessage(content="Yes."), AIMessage(content="No.")]))
    judge = JudgeScorer(model, max_concurrency=1)
    assert judge.mode == "text"
    assert judge.score(_items()[:2]) == [1.0, 0.0]


def test_structured_mode_needs_tool_calling() -> None:
    with pytest.raises(ValueError, match="mode='text'"):
        JudgeScorer(GenericFakeChatModel(messages=iter([])), mode="structured")


def test_unreadable_replies_and_failed_calls_are_marked_failed_with_a_reason() -> None:
    def reply(prompt: str) -> AIMessage:
        if "= 20" in prompt:
            raise RuntimeError("rate limited; key sk-abcdefghijklmnop rejected")
        return AIMessage(content="Hmm, let me think about it.")

    scores = JudgeScorer(ScriptedJudge(reply=reply), mode="text").score_detailed(_items()[:2])
    assert scores[0].value == 0.5 and scores[0].reason.startswith("scorer failed: unreadable judge verdict")
    assert scores[1].value == 0.5 and "judge call failed: RuntimeError" in scores[1].reason
    assert scores[0].failed and scores[1].failed
    assert "sk-abcdefghijklmnop" not in scores[1].reason


def test_batch_respects_the_concurrency_limit() -> None:
    model = ScriptedJudge(reply=lambda p: AIMessage(content="Yes"))
    items = [ScoreItem(subtask="q", answer=f"answer {i}") for i in range(12)]
    assert JudgeScorer(model, mode="text", max_concurrency=3).score(items) == [1.0] * 12
    assert len(model.prompts) == 12
    assert 1 <= model.most_in_flight <= 3


async def test_async_scoring_uses_abatch() -> None:
    model = ScriptedJudge(reply=lambda p: AIMessage(content="Yes" if "= 18" in p else "No"))
    scores = await JudgeScorer(model, mode="text", max_concurrency=2).ascore_detailed(_items())
    assert [s.value for s in scores] == [1.0, 0.0, 0.0]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Yes", 1.0),
        ("**No**", 0.0),
        ("Verdict: incorrect (confidence 80%)", pytest.approx(0.2)),
        ('{"correct": true, "confidence": 0.7}', 0.7),
        ("There is no error in the steps, so the answer is correct.", 1.0),
        ("The candidate's answer is not correct.", 0.0),
        ("Yes, with probability 0.9", 0.9),
        ("I cannot tell.", None),
    ],
)
def test_parse_verdict_text(text: str, value: float | None) -> None:
    assert parse_verdict_text(text) == value


def test_read_verdict_handles_each_reply_shape() -> None:
    assert read_verdict(Verdict(correct=False, confidence=0.6)).value == pytest.approx(0.4)
    assert read_verdict({"raw": AIMessage(content="Yes"), "parsed": None, "parsing_error": None}).value == 1.0
    assert read_verdict(_logprob_message(0.6, 0.2)).value == pytest.approx(0.75)
    assert yes_probability(AIMessage(content="Yes")) is None
    unrelated = AIMessage(
        content="Maybe", response_metadata={"logprobs": {"content": [{"token": "Maybe", "logprob": -0.1}]}}
    )
    assert yes_probability(unrelated) is None
