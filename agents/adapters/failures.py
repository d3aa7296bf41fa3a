"""Why an agent call gave no answer, as a type: the kind every failed `AgentAnswer` and candidate record carries.

Code decides on the kind (is the call learned from? does it count against its endpoint's health? did the
run's budget cut the question short?); the error line next to it is for people. An exception that knows
its kind says so by subclassing `DeclinedCall` (a replay agent without a recording, a tool that is not
given a calculation); any other exception is a timeout or a plain error.
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
    """Written by earlier versions only (kept so their results still read): a replay agent asked a linked
    sub-question after a wrong parent answer gave no answer, charged as its recorded call to the original.
    It now answers with that recording (`reso.agents.adapters.replay`)."""
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
    def unlearned(self) -> bool:
        """The call tells nothing of the agent's skill, so training learns nothing from it: it was never made,
        or a replay agent has no recording of the question (a gap in the recordings, not a wrong answer)."""
        return self.never_called or self in (FailureKind.NO_RECORDING, FailureKind.UNRECORDED_LINK)

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
