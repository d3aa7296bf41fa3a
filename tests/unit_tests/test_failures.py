"""Failure kinds are types: what each kind means to learning and to health, how exceptions name their kind,
and results lines written before kinds existed still read (and resume) as before."""

from __future__ import annotations

import json

import pytest

from reso.agents.adapters.failures import (
    DeclinedCall,
    FailureKind,
    charged_tokens,
    failure_kind,
    recorded_failure,
)
from reso.agents.adapters.replay import NoRecordingError, UnrecordedLinkError
from reso.agents.adapters.tools import ToolDeclined
from tests.unit_tests.test_runner import _lines, _problem, _run, _team


@pytest.mark.parametrize(("kind", "never_called", "neutral"), [
    (FailureKind.BUDGET_EXCEEDED, True, True),
    (FailureKind.RUN_BUDGET_EXCEEDED, True, True),
    (FailureKind.NO_RECORDING, False, True),
    (FailureKind.UNRECORDED_LINK, False, True),  # charged and learned from (reward 0), not the endpoint's fault
    (FailureKind.TOOL_DECLINED, False, True),
    (FailureKind.TIMEOUT, False, False),
    (FailureKind.ERROR, False, False),
])
def test_what_each_kind_means(kind, never_called, neutral):
    assert (kind.never_called, kind.neutral) == (never_called, neutral)


def test_exceptions_name_their_kind():
    assert failure_kind(NoRecordingError("no recording")) is FailureKind.NO_RECORDING
    charged = UnrecordedLinkError("wrong parent", input_tokens=120, output_tokens=30)
    assert failure_kind(charged) is FailureKind.UNRECORDED_LINK and isinstance(charged, NoRecordingError)
    assert charged_tokens(charged) == (120, 30)
    assert charged_tokens(NoRecordingError("no recording")) == charged_tokens(TimeoutError()) == (0, 0)
    assert failure_kind(ToolDeclined("not a calculation")) is FailureKind.TOOL_DECLINED
    assert failure_kind(TimeoutError()) is FailureKind.TIMEOUT
    assert failure_kind(RuntimeError("ToolDeclined somewhere in the message")) is FailureKind.ERROR
    # Still the exceptions they were: callers catching LookupError / ValueError keep working.
    assert isinstance(NoRecordingError(), LookupError) and isinstance(ToolDeclined(), ValueError)
    assert issubclass(NoRecordingError, DeclinedCall) and issubclass(ToolDeclined, DeclinedCall)


def test_a_results_line_gives_its_kind_and_an_older_line_its_error_name():
    assert recorded_failure({"error": None, "failure": None}) is None
    assert recorded_failure({"error": "BudgetExceeded: run token budget", "failure": "run_budget_exceeded"}) \
        is FailureKind.RUN_BUDGET_EXCEEDED
    # Lines written before kinds existed carry only the error line.
    assert recorded_failure({"error": "NoRecordingError: no recording of this question"}) is FailureKind.NO_RECORDING
    assert recorded_failure({"error": "ToolDeclined: not a calculation"}) is FailureKind.TOOL_DECLINED
    assert recorded_failure({"error": "BudgetExceeded: token budget of 5 spent"}) is FailureKind.BUDGET_EXCEEDED
    assert recorded_failure({"error": "InternalServerError: boom"}) is FailureKind.ERROR
    assert recorded_failure({}) is None


def test_a_results_file_written_before_failure_kinds_resumes(tmp_path):
    problems = [_problem(i) for i in range(3)]
    team, strong = _team(problems)
    _run(tmp_path, problems[:2], team=team)
    lines = _lines(tmp_path / "results.jsonl")
    assert all("failure" in c for line in lines for step in line["steps"] for c in step["candidates"])
    for line in lines:  # as an older version wrote them
        for step in line["steps"]:
            for candidate in step["candidates"]:
                del candidate["failure"]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    calls = len(strong.calls)
    summary = _run(tmp_path, problems, team=team)
    assert len(strong.calls) - calls == 2, "only the new item is asked"
    assert summary["n"] == 3 and summary["correct"] == 3
