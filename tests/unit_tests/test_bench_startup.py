"""`reso bench startup`'s measuring parts: what a terminal shows of rich's output, the first progress line of a
child on a pseudo-terminal, and the refusal of a failed run (no timing targets: the machine decides those)."""

from __future__ import annotations

import sys

import pytest

from reso.evals.bench.startup import Timing, _checked, child_env, first_visible_line, run_timed, visible_text

SPINNER_FRAME = b"\x1b[?25l\r\x1b[2K\xe2\xa0\x8b loading the team \xe2\x80\xa6\x1b[0m"


def test_control_sequences_are_not_visible_text() -> None:
    assert visible_text(SPINNER_FRAME) == "⠋ loading the team …"
    assert visible_text(b"\x1b[?25l\x1b[2K\r\x1b]8;;http://x\x1b\\") == ""
    assert first_visible_line(b"\x1b[?25l\n  \n" + SPINNER_FRAME + b"\nlater") == "⠋ loading the team …"


def test_the_first_visible_line_on_the_terminal_and_the_answer_on_stdout_are_captured() -> None:
    child = ("import sys\nsys.stderr.write('\\x1b[?25l'); sys.stderr.flush()\n"
             "sys.stderr.write('\\rstage one\\n'); sys.stderr.flush()\n"
             "sys.stderr.write('\\rstage two\\n'); print('answer: 1')")
    timing = run_timed([sys.executable, "-c", child], child_env("/nonexistent-cache"))
    assert (timing.returncode, timing.first_line, timing.stdout) == (0, "stage one", "answer: 1\n")
    assert timing.first_output_s is not None and 0 < timing.first_output_s <= timing.exit_s
    assert timing.terminal_text.splitlines() == ["stage one", "stage two"]


def test_a_child_that_draws_nothing_has_no_first_line() -> None:
    timing = run_timed([sys.executable, "-c", "print('only stdout')"], child_env("/nonexistent-cache"))
    assert timing.first_output_s is None and timing.first_line == "" and timing.stdout == "only stdout\n"
    with pytest.raises(ValueError, match="printed no progress line"):
        _checked(timing, "reso solve")


def test_a_failed_solve_is_refused_with_its_last_line() -> None:
    failed = Timing(0.1, 0.2, "error: p.yaml: pool file not found", 2, "", "error: p.yaml: pool file not found\n")
    with pytest.raises(ValueError, match="exited with code 2: error: p.yaml: pool file not found"):
        _checked(failed, "reso solve")
    unanswered = Timing(0.1, 0.2, "⠋ loading", 1, "answer: (none)", "⠋ loading\nerror: no answer\n")
    assert _checked(unanswered, "reso solve") is unanswered


def test_children_get_the_benchmark_cache_and_a_terminal_rich_draws_on() -> None:
    env = child_env("/tmp/cache", {"TERM": "dumb", "NO_COLOR": "1", "HOME": "/h"})
    assert env == {"TERM": "xterm-256color", "HOME": "/h", "RESO_CACHE_DIR": "/tmp/cache", "COLUMNS": "120"}
