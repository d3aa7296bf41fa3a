"""Failure kinds are types: what each kind means to learning and to health, how exceptions name their kind,
and how a results line gives its kind."""

from __future__ import annotations

import pytest

from reso.agents.adapters.failures import DeclinedCall, FailureKind, failure_kind, recorded_failure
from reso.agents.adapters.replay import NoRecordingError
from reso.agents.adapters.tools import ToolDeclined


@pytest.mark.parametrize(("kind", "never_called", "unlearned", "neutral"), [
    (FailureKind.BUDGET_EXCEEDED, True, True, True),
    (FailureKind.RUN_BUDGET_EXCEEDED, True, True, True),
    # A gap in the recordings: no answer, so no reward in training, and not the endpoint's fault.
    (FailureKind.NO_RECORDING, False, True, True),
    (FailureKind.UNRECORDED_LINK, False, True, True),  # earlier versions' rows only
    (FailureKind.TOOL_DECLINED, False, False, True),  # the tool cannot do word problems: learned as 0
    (FailureKind.TIMEOUT, False, False, False),
    (FailureKind.ERROR, False, False, False),
])
def test_what_each_kind_means(kind, never_called, unlearned, neutral):
    assert (kind.never_called, kind.unlearned, kind.neutral) == (never_called, unlearned, neutral)


def test_exceptions_name_their_kind():
    assert failure_kind(NoRecordingError("no recording")) is FailureKind.NO_RECORDING
    assert failure_kind(ToolDeclined("not a calculation")) is FailureKind.TOOL_DECLINED
    assert failure_kind(TimeoutError()) is FailureKind.TIMEOUT
    assert failure_kind(RuntimeError("ToolDeclined somewhere in the message")) is FailureKind.ERROR
    # Still the exceptions they were: callers catching LookupError / ValueError keep working.
    assert isinstance(NoRecordingError(), LookupError) and isinstance(ToolDeclined(), ValueError)
    assert issubclass(NoRecordingError, DeclinedCall) and issubclass(ToolDeclined, DeclinedCall)


def test_a_results_line_gives_its_kind():
    assert recorded_failure({"error": None, "failure": None}) is None
    assert recorded_failure({"error": "BudgetExceeded: run token budget", "failure": "run_budget_exceeded"}) \
        is FailureKind.RUN_BUDGET_EXCEEDED
    assert recorded_failure({"error": "NoRecordingError: no recording", "failure": "no_recording"}) \
        is FailureKind.NO_RECORDING
    assert recorded_failure({}) is None
