"""`reso bench startup`: how soon `reso solve` shows its first progress line, beside Python's own start.

Every round runs three fresh processes one after the other, so all three see the same machine load:

- `python -c pass`: the interpreter's start, the floor under any command;
- `reso --help` (as `python -m reso.evals.cli --help`): the command line's own imports;
- `reso solve QUESTION` on the default offline pool and settings, its standard error on a pseudo-terminal
  (the progress view draws only on a terminal): the time to the first visible text there (the first
  progress line) and to the process's exit (the answer line printed).

The disk cache (`RESO_CACHE_DIR`) is a fresh temporary folder: one untimed solve fills it first (reported as
`cold_cache`), so the timed rounds run on a warm cache without reading or writing the user's. Medians over
the rounds are reported; the target is the first progress line within `TARGET_FIRST_PROGRESS_S`.
POSIX only (pseudo-terminals).
"""

from __future__ import annotations

import os
import pty
import re
import select
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

TARGET_FIRST_PROGRESS_S = 3.0
DEFAULT_QUESTION = (
    "Janet’s ducks lay 16 eggs per day. She eats three for breakfast every morning and bakes muffins for her "
    "friends every day with four. She sells the remainder at the farmers' market daily for $2 per fresh duck "
    "egg. How much in dollars does she make every day at the farmers' market?"
)
"""A GSM8K test question the default pool has recorded answers to (so the run answers it, offline)."""

# Terminal control sequences (CSI such as cursor moves and colours, OSC, single-character escapes): what
# rich writes around its text, which is not text a person sees.
_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


def visible_text(raw: bytes) -> str:
    """What a terminal shows of `raw` output: control sequences and carriage returns removed."""
    return _CONTROL.sub("", raw.decode("utf-8", errors="replace")).replace("\r", "")


def first_visible_line(raw: bytes) -> str:
    """The first line of `raw` with visible text on it, stripped ("" when there is none)."""
    return next((line.strip() for line in visible_text(raw).splitlines() if line.strip()), "")


@dataclass(frozen=True)
class Timing:
    """One process: seconds to its first visible text on the terminal (None: it showed none) and to its exit."""

    first_output_s: float | None
    exit_s: float
    first_line: str
    returncode: int
    stdout: str
    terminal_text: str


def run_timed(argv: Sequence[str], env: Mapping[str, str], *, timeout_s: float = 300.0) -> Timing:
    """Run `argv` with standard error on a pseudo-terminal and standard output on a pipe, timing the first
    visible text on the terminal and the exit from just before the process starts.

    Raises:
        TimeoutError: The process ran longer than `timeout_s` (it is killed).
    """
    leader, follower = pty.openpty()
    started = time.perf_counter()
    process = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=follower,
                               env=dict(env))
    os.close(follower)  # the child holds the only copy, so the leader reads EOF (EIO) when it exits
    first: float | None = None
    first_line = ""
    output = bytearray()
    try:
        while True:
            if time.perf_counter() - started > timeout_s:
                process.kill()
                process.wait()
                raise TimeoutError(f"{' '.join(argv[:4])} … ran past {timeout_s:g} s")
            ready, _, _ = select.select([leader], [], [], 0.05)
            if not ready:
                continue
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the child and every process holding the terminal are gone
                break
            if not chunk:
                break
            output += chunk
            if first is None and visible_text(bytes(output)).strip():
                first = time.perf_counter() - started
                first_line = first_visible_line(bytes(output))  # later frames redraw over it
        stdout = process.stdout.read().decode("utf-8", errors="replace") if process.stdout else ""
        returncode = process.wait()
        exited = time.perf_counter() - started
    finally:
        os.close(leader)
        if process.stdout:
            process.stdout.close()
    return Timing(first, exited, first_line, returncode, stdout, visible_text(bytes(output)))


def child_env(cache_dir: str, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of the timed processes: the caller's, with the benchmark's cache folder, a terminal
    rich will draw on, and a fixed width."""
    env = dict(os.environ if base is None else base)
    env["RESO_CACHE_DIR"] = cache_dir
    if env.get("TERM", "dumb") in ("", "dumb", "unknown"):
        env["TERM"] = "xterm-256color"
    env["COLUMNS"] = "120"
    for variable in ("NO_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):  # would change what rich draws
        env.pop(variable, None)
    return env


def _summary(values: Sequence[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def _checked(timing: Timing, what: str) -> Timing:
    # Exit code 1 is a run without an answer (a question outside the recordings): its start still counts.
    if timing.returncode not in (0, 1):
        last = next((line for line in reversed(timing.terminal_text.splitlines()) if line.strip()), "")
        raise ValueError(f"{what} exited with code {timing.returncode}: {last.strip() or '(no output)'}")
    if timing.first_output_s is None:
        raise ValueError(f"{what} printed no progress line on the terminal")
    return timing


def run_bench(*, runs: int = 5, question: str = DEFAULT_QUESTION, timeout_s: float = 300.0) -> dict[str, Any]:
    """Time `runs` rounds of (python -c pass, reso --help, reso solve QUESTION) after one cache-filling solve.

    Raises:
        ValueError: `reso solve` failed (bad input, a crash) or showed no progress line.
        TimeoutError: A process ran past `timeout_s`.
    """
    python = sys.executable
    solve = [python, "-m", "reso.evals.cli", "solve", question]
    with tempfile.TemporaryDirectory(prefix="reso-bench-startup-") as cache_dir:
        env = child_env(cache_dir)
        cold = _checked(run_timed(solve, env, timeout_s=timeout_s), "reso solve (cold cache)")
        samples: dict[str, list[float]] = {"python_pass_s": [], "help_s": [], "solve_first_progress_s": [],
                                           "solve_exit_s": []}
        last = cold
        for _ in range(runs):
            samples["python_pass_s"].append(run_timed([python, "-c", "pass"], env, timeout_s=timeout_s).exit_s)
            samples["help_s"].append(run_timed([python, "-m", "reso.evals.cli", "--help"], env,
                                               timeout_s=timeout_s).exit_s)
            last = _checked(run_timed(solve, env, timeout_s=timeout_s), "reso solve")
            assert last.first_output_s is not None  # _checked says so
            samples["solve_first_progress_s"].append(last.first_output_s)
            samples["solve_exit_s"].append(last.exit_s)
    medians = {name: statistics.median(values) for name, values in samples.items()}
    return {
        "runs": runs,
        "question": question,
        **medians,
        "first_progress_vs_python": medians["solve_first_progress_s"] / medians["python_pass_s"],
        "first_progress_line": last.first_line,
        "answer_line": last.stdout.strip().splitlines()[-1] if last.stdout.strip() else "",
        "target_first_progress_s": TARGET_FIRST_PROGRESS_S,
        "target_met": medians["solve_first_progress_s"] <= TARGET_FIRST_PROGRESS_S,
        "cold_cache": {"solve_first_progress_s": cold.first_output_s, "solve_exit_s": cold.exit_s},
        "spread": {name: _summary(values) for name, values in samples.items()},
        "samples": samples,
    }


def render_table(report: dict[str, Any]) -> Any:
    """The report as a rich table."""
    from rich.table import Table

    table = Table(title=f"reso bench startup: {report['runs']} rounds, warm disk cache")
    for column in ("process", "median s", "min s", "max s"):
        table.add_column(column, justify="right")
    labels = {"python_pass_s": "python -c pass", "help_s": "reso --help",
              "solve_first_progress_s": "reso solve: first progress line", "solve_exit_s": "reso solve: exit"}
    for name, label in labels.items():
        spread = report["spread"][name]
        table.add_row(label, f"{spread['median']:.3f}", f"{spread['min']:.3f}", f"{spread['max']:.3f}")
    cold = report["cold_cache"]
    table.caption = (f"first line: {report['first_progress_line']!r}; target ≤ {report['target_first_progress_s']:g} s "
                     f"({'met' if report['target_met'] else 'not met'}); cold cache: first line "
                     f"{cold['solve_first_progress_s']:.2f} s, exit {cold['solve_exit_s']:.2f} s")
    return table
