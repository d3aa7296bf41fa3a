"""Why an agent call gave no answer, as a type: the kind every failed `AgentAnswer` and candidate record carries.

Code decides on the kind (is the call learned from? does it count against its endpoint's health? did the
run's budget cut the question short?); the error line next to it is for people. An exception that knows
its kind says so by subclassing `DeclinedCall` (a replay agent without a recording, a tool that is not
given a calculation); any other exception is a timeout or a plain error. A declined call that is still
charged tokens (`ChargedDecline`: a replay agent asked a linked sub-question after a wrong parent answer)
carries them, and `reso.agents.adapters.invoke.call_agent` puts them and their cost on the failed answer.
"""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar


class FailureKind(StrEnum):
    """What kind of failure a call ended in (the value is what results files store)."""

    BUDGET_EXCEEDED = "budget_exceeded"
    """Refused before it was made: the question's budget was spent."""
    RUN_BUDGET_EXCEEDED = "run_budget_exceeded"
    """Refused before it was made: the whole run's budget was spent."""
    NO_RECORDING = "no_recording"
    """A replay agent has no recording of the question (costs nothing)."""
    UNRECORDED_LINK = "unrecorded_link"
    """A replay agent was asked a linked sub-question whose constant, computed from a wrong (or missing)
    parent answer, gives a question nobody recorded: no answer, but charged as the model's recorded call to
    the original sub-question, so a model's own mistakes do not make its run cheaper."""
    TOOL_DECLINED = "tool_declined"
    """An exact tool was not given a calculation it can read."""
    TIMEOUT = "timeout"
    """No answer within the call's time limit (after any retries)."""
    ERROR = "error"
    """Any other failure of the call (HTTP errors, lost connections, bugs in a model adapter)."""

    @property
    def never_called(self) -> bool:
        """The call was refused before it was made, so it says nothing about the agent."""
        return self in (FailureKind.BUDGET_EXCEEDED, FailureKind.RUN_BUDGET_EXCEEDED)

    @property
    def declined(self) -> bool:
        """A healthy agent was reached and declined the subtask (no recording of it, no calculation given)."""
        return self in (FailureKind.NO_RECORDING, FailureKind.UNRECORDED_LINK, FailureKind.TOOL_DECLINED)

    @property
    def neutral(self) -> bool:
        """The call says nothing about its endpoint's health: never made, or a healthy agent declined."""
        return self.never_called or self.declined


class DeclinedCall(Exception):
    """Raised by an agent that was reached and declined the subtask; `kind` says how."""

    kind: ClassVar[FailureKind] = FailureKind.ERROR


class ChargedDecline(DeclinedCall):
    """A declined call that is charged all the same: the tokens the call would have cost."""

    def __init__(self, message: str = "", *, input_tokens: int = 0, output_tokens: int = 0) -> None:
        super().__init__(message)
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens


def charged_tokens(error: BaseException) -> tuple[int, int]:
    """The (input, output) tokens a failed call is charged: a `ChargedDecline`'s, else none."""
    if isinstance(error, ChargedDecline):
        return error.input_tokens, error.output_tokens
    return 0, 0


def failure_kind(error: BaseException) -> FailureKind:
    """The kind of failure `error` ended a call with."""
    if isinstance(error, DeclinedCall):
        return error.kind
    if isinstance(error, TimeoutError):
        return FailureKind.TIMEOUT
    return FailureKind.ERROR


def recorded_failure(candidate: dict[str, object]) -> FailureKind | None:
    """The failure kind of a candidate as a results line stores it (None: it answered)."""
    kind = candidate.get("failure")
    return None if kind is None else FailureKind(str(kind))
