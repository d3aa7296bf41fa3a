"""The LLM planner: any LangChain chat model decomposes a question into a task DAG.

The model is asked for a `Plan` through `with_structured_output` when it supports tool calling, and for a
JSON object in plain text otherwise (a structured call that comes back as text is read the same way). An
invalid answer is sent back to the model with the validation error; after the last failed attempt the
planner returns the one-step plan (the whole question as a single step), so no question is ever lost.

What happened is recorded in a `PlanResult` (attempts, errors, repairs, fallback, tokens):
`plan_with_report` / `aplan_with_report` return it; `plan` / `aplan` return the plan alone.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from reso.graphs.dag import PlanError, TaskDAG
from reso.graphs.plan_settings import PlannerName
from reso.graphs.planners.base import PlanResult


class PlanStep(BaseModel):
    """One step of a plan, as the model writes it."""

    model_config = ConfigDict(coerce_numbers_to_str=True)

    id: str = Field(description="Short unique id of this step, such as '1', '2', '3'.")
    instruction: str = Field(
        description=(
            "What this step must work out, self-contained: include every number and fact from the "
            "question that it needs, and refer to an earlier step's result as Answer[<id>]."
        )
    )
    depends_on: list[str] = Field(
        default_factory=list,
        description="Ids of the earlier steps whose answers this step needs; empty when it needs none.",
    )


class Plan(BaseModel):
    """A question decomposed into steps that agents solve one by one or in parallel."""

    steps: list[PlanStep] = Field(
        min_length=1,
        description=(
            "The steps, each listed after the steps it depends on. The last step produces the final "
            "answer to the whole question and, directly or through other steps, uses every other step."
        ),
    )


SYSTEM_PROMPT = """\
You plan how a team of agents will solve a question. Split the question into steps:
- each step is one self-contained subtask with a short unique id;
- a step lists in depends_on the ids of the earlier steps whose answers it needs, and refers to those \
answers as Answer[<id>];
- steps that do not need each other must not depend on each other, so they can run in parallel;
- no step may depend on itself or on a later step (no cycles);
- the last step gives the final answer to the whole question and every other step feeds into it;
- use as few steps as the question needs: a simple question is a single step."""

JSON_INSTRUCTION = """
Reply with one JSON object and nothing else, in this form:
{"steps": [{"id": "1", "instruction": "...", "depends_on": []}, \
{"id": "2", "instruction": "... Answer[1] ...", "depends_on": ["1"]}]}"""

_FENCED = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


class LLMPlanner:
    """Plans any question with a chat model; see the module docstring for retries and the fallback.

    Args:
        model: A LangChain chat model (real, local, or a scripted fake in tests).
        max_retries: Extra attempts after the first invalid answer, each told what was wrong.
        max_steps: Plans with more steps count as invalid (and the model is asked for fewer).
    """

    name = PlannerName.LLM.value

    def __init__(self, model: BaseChatModel, *, max_retries: int = 2, max_steps: int = 20) -> None:
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        if max_steps < 1:
            raise ValueError("max_steps must be >= 1")
        self.model = model
        self.max_retries = max_retries
        self.max_steps = max_steps
        self._runnable: Runnable[Any, Any]
        try:
            self._runnable = model.with_structured_output(Plan, include_raw=True)
            self.structured = True
        except NotImplementedError:
            self._runnable = model
            self.structured = False

    def messages(self, question: str, feedback: str | None = None) -> list[BaseMessage]:
        """The prompt of one attempt: instructions, the question, and what was wrong last time."""
        system = SYSTEM_PROMPT if self.structured else SYSTEM_PROMPT + JSON_INSTRUCTION
        messages: list[BaseMessage] = [SystemMessage(system), HumanMessage(f"Question:\n{question}")]
        if feedback:
            messages.append(HumanMessage(feedback))
        return messages

    def plan_with_report(self, question: str) -> PlanResult:
        """Plans `question`, retrying with feedback, falling back to one step; never raises for bad output.

        Raises:
            PlanError: The question is empty.
        """
        run = _Attempts(self, question)
        while run.more():
            try:
                output = self._runnable.invoke(self.messages(question, run.feedback))
            except Exception as error:  # noqa: BLE001 - a failing model must not lose the question
                run.model_failed(error)
                continue
            run.interpret(output)
        return run.result()

    async def aplan_with_report(self, question: str) -> PlanResult:
        """Async `plan_with_report`."""
        run = _Attempts(self, question)
        while run.more():
            try:
                output = await self._runnable.ainvoke(self.messages(question, run.feedback))
            except Exception as error:  # noqa: BLE001 - a failing model must not lose the question
                run.model_failed(error)
                continue
            run.interpret(output)
        return run.result()

    def plan(self, question: str) -> TaskDAG:
        """The plan for `question` (its report: `plan_with_report`)."""
        return self.plan_with_report(question).dag

    async def aplan(self, question: str) -> TaskDAG:
        """Async `plan`."""
        return (await self.aplan_with_report(question)).dag


class _Attempts:
    """The bookkeeping of one planning run: attempts, errors, feedback for the next attempt, the result."""

    def __init__(self, planner: LLMPlanner, question: str) -> None:
        if not question or not question.strip():
            raise PlanError("the question is empty")
        self.planner = planner
        self.question = question.strip()
        self.attempts = 0
        self.errors: list[str] = []
        self.feedback: str | None = None
        self.dag: TaskDAG | None = None
        self.input_tokens = 0
        self.output_tokens = 0

    def more(self) -> bool:
        return self.dag is None and self.attempts < 1 + self.planner.max_retries

    def model_failed(self, error: Exception) -> None:
        from reso.agents.adapters.invoke import redact

        self.attempts += 1
        # Providers echo a rejected key in their error text; these notes reach stderr and results files.
        secrets = [value for name, value in os.environ.items()
                   if name.endswith(("_API_KEY", "_TOKEN", "_SECRET")) and len(value) >= 4]
        first_line = redact((str(error).splitlines() or [""])[0], secrets)[:200]
        self.errors.append(
            f"attempt {self.attempts}: the model call failed: {type(error).__name__}: {first_line}"
        )

    def interpret(self, output: Any) -> None:
        self.attempts += 1
        raw = output.get("raw") if isinstance(output, dict) else output
        if isinstance(raw, AIMessage) and raw.usage_metadata:
            self.input_tokens += raw.usage_metadata.get("input_tokens", 0)
            self.output_tokens += raw.usage_metadata.get("output_tokens", 0)
        shown = _shown(output, raw)
        try:
            steps = _steps_from_output(output, raw)
            dag = TaskDAG.from_steps(steps)
            if len(dag) > self.planner.max_steps:
                raise PlanError(f"the plan has {len(dag)} steps; use at most {self.planner.max_steps}")
        except (PlanError, ValueError) as error:
            message = _describe(error)
            self.errors.append(f"attempt {self.attempts}: {message}")
            self.feedback = (
                f"Your previous plan was not valid: {message}\n"
                f"Your previous answer was:\n{shown[:2000]}\n"
                "Return a corrected plan for the same question."
            )
            return
        self.dag = dag

    def result(self) -> PlanResult:
        notes: list[str] = []
        fallback = self.dag is None
        if self.dag is None:
            self.dag = TaskDAG.single_step(self.question)
            notes.append(
                f"the model gave no valid plan in {self.attempts} attempt(s); "
                "the question is planned as a single step"
            )
        else:
            notes = self.dag.repair_notes
        return PlanResult(dag=self.dag, planner=self.planner.name, attempts=self.attempts,
                          errors=self.errors, notes=notes, fallback=fallback,
                          input_tokens=self.input_tokens, output_tokens=self.output_tokens)


def _steps_from_output(output: Any, raw: Any) -> list[dict[str, Any]]:
    """The steps in a model's answer: the parsed structured output, else the tool call's arguments (validated
    here so that the error reads like any other), else JSON found in the text."""
    if isinstance(output, dict) and isinstance(output.get("parsed"), Plan):
        return [step.model_dump() for step in output["parsed"].steps]
    if isinstance(raw, AIMessage) and raw.tool_calls:
        data: Any = raw.tool_calls[0].get("args", {})
    else:
        data = _json_in_text(raw.text if isinstance(raw, BaseMessage) else str(raw))
    if isinstance(data, dict):
        if "steps" not in data and "plan" not in data:
            raise ValueError("the JSON object has no 'steps' list")
        data = data.get("steps", data.get("plan"))
    plan = Plan.model_validate({"steps": data})
    return [step.model_dump() for step in plan.steps]


def _json_in_text(text: str) -> Any:
    """The first complete JSON object or list in a text (bare, fenced, or surrounded by prose).

    Hand-written because `langchain_core`'s `parse_json_markdown` completes truncated JSON, which would
    turn a cut-off plan into a shorter, wrong one.
    """
    candidates = [match.group(1) for match in _FENCED.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for candidate in candidates:
        # Only the first bracket: starting later could pick up one step out of a truncated plan.
        start = next((i for i, char in enumerate(candidate) if char in "{["), None)
        if start is None:
            continue
        try:
            return decoder.raw_decode(candidate, start)[0]
        except json.JSONDecodeError:
            continue
    raise ValueError("the answer contains no complete JSON object with the plan's steps")


def _shown(output: Any, raw: Any) -> str:
    """The previous answer as the model should see it in the feedback."""
    if isinstance(output, dict) and isinstance(output.get("parsed"), Plan):
        return output["parsed"].model_dump_json()
    if isinstance(raw, AIMessage) and raw.tool_calls and not raw.text.strip():
        return json.dumps(raw.tool_calls[0].get("args", {}))
    return raw.text if isinstance(raw, BaseMessage) else str(raw)


def _describe(error: Exception) -> str:
    """A one-line explanation of why a plan was rejected."""
    if isinstance(error, ValidationError):
        parts = [
            f"{'.'.join(str(part) for part in issue['loc']) or 'plan'}: {issue['msg']}"
            for issue in error.errors()[:5]
        ]
        return "the plan does not match the schema (" + "; ".join(parts) + ")"
    return str(error)
