"""`reso demo`'s progress: the tally counts resumed items as done and takes its paces from the items
answered now; off a terminal the command prints one plain line per finished run (no escape codes), and on
one the display shows the run and the benchmark with their ETAs, its lines never highlighted."""

from __future__ import annotations

import io
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from reso.evals.cli import app
from reso.evals.cli.demo_progress import LiveProgress, PlainProgress, is_live
from reso.evals.cli.demo_tally import Tally, eta_text
from reso.evals.jobs import config, demo
from reso.evals.jobs.events import BASELINES, FITTING_CRM, TESTING_RESO, TRAINING, PlannedRun, RunStart
from reso.evals.jobs.fine_stages import STAGE_LABELS, FineStage
from reso.evals.jobs.runs import run_folder


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def row(correct: bool, cost: float = 0.5) -> dict[str, Any]:
    return {"correct": correct, "usage": {"cost_usd": cost}}


PLAN = [PlannedRun("train-reso", "reso (training)", "train", 10),
        PlannedRun("test-single-a", "single:a", "test", 5),
        PlannedRun("test-reso", "reso", "test", 5, done=2)]


def run(folder: str, label: str, mode: str, items: int, done: int = 0, correct: int = 0) -> RunStart:
    return RunStart("Bench", label, "bench-test", mode, Path("out") / folder, items, done, correct, 0.25 * done)


def test_the_tally_counts_resumed_items_and_paces_from_items_answered_now() -> None:
    clock = Clock()
    tally = Tally(clock=clock)
    tally.plan("Bench", PLAN)
    assert tally.items() == (2, 20) and tally.runs() == (0, 3)  # test-reso's folder holds 2 already
    tally.start_phase("Bench", TRAINING)
    training = run("train-reso", "reso (training)", "train", 10)
    tally.run_started(training)
    assert tally.run_eta() is None and eta_text(tally.benchmark_eta()) == "ETA -:--"
    for _ in range(4):
        clock.now += 2
        tally.item_done(row(True))
    assert tally.run_eta() == 12.0  # 6 left at 2 s each
    assert tally.benchmark_eta() == (12.0, False)  # no test run has a pace yet: a lower bound
    assert eta_text(tally.benchmark_eta()) == "ETA > 0:12"
    for _ in range(6):
        clock.now += 2
        tally.item_done(row(False))
    finished = tally.run_finished(training, {"n": 10})
    assert (finished.done, finished.correct, finished.live, finished.cost_usd) == (10, 4, 10, 5.0)
    assert tally.items() == (12, 20) and tally.runs() == (1, 3)

    tally.start_phase("Bench", BASELINES)
    single = run("test-single-a", "single:a", "test", 5)
    tally.run_started(single)
    clock.now += 30  # the run's team is built before its first item comes
    tally.item_done(row(True))
    # One item says nothing of the pace of the rest (it waited for the team): unknown, not 4 x 30 s.
    assert tally.run_eta() is None
    clock.now += 1
    tally.item_done(row(True))
    assert tally.run_eta() == 3.0  # 3 left at 1 s each
    clock.now += 3
    for _ in range(3):
        tally.item_done(row(True))
    tally.run_finished(single, {"n": 5})  # a test run, whole: 34 s for 5 items

    tally.start_phase("Bench", TESTING_RESO)
    resumed = run("test-reso", "reso", "test", 5, done=2, correct=1)
    tally.run_started(resumed)
    assert tally.items() == (17, 20)
    # No reso run has a pace yet: the test runs' pace stands in, for the 3 items left.
    assert tally.run_eta() == pytest.approx(3 * 34 / 5) and tally.benchmark_eta() == (pytest.approx(3 * 34 / 5), True)
    assert tally.current is not None and (tally.current.done, tally.current.correct) == (2, 1)
    tally.run_finished(resumed, {"n": 5})
    assert tally.benchmark_eta() == (0.0, True) and tally.items() == (20, 20)
    # While a task in another process runs, how long it takes is not foreseen: the ETA is a lower bound.
    tally.background_changed("general CRM", True)
    assert tally.benchmark_eta() == (0.0, False)
    tally.background_changed("general CRM", False)
    assert tally.benchmark_eta() == (0.0, True)


def two_benchmarks(clock: Clock) -> Tally:
    """A tally of a job of two benchmarks, B twice A's size, planned before the first starts."""
    tally = Tally(clock=clock)
    for name, scale in (("A", 1), ("B", 2)):
        tally.plan(name, [PlannedRun("train-reso", "reso (training)", "train", 10 * scale),
                          PlannedRun("test-single-a", "single:a", "test", 5 * scale),
                          PlannedRun("test-reso", "reso", "test", 5 * scale)])
    return tally


def answer(tally: Tally, clock: Clock, name: str, folder: str, label: str, mode: str, items: int, wait: float,
           each: float) -> None:
    """A run of `items` on benchmark `name`: its team built in `wait` s, then an item every `each` s."""
    started = RunStart(name, label, "data", mode, Path("out") / folder, items)
    tally.run_started(started)
    clock.now += wait
    for _ in range(items):
        clock.now += each
        tally.item_done(row(True))
    tally.run_finished(started, {"n": items})


def test_the_jobs_eta_adds_every_phase_left_at_its_measured_time_and_never_drops_what_is_known() -> None:
    clock = Clock()
    tally = two_benchmarks(clock)
    assert tally.items(list(tally.plans)) == (0, 60) and tally.job_eta() == (0.0, False)
    tally.start_phase("A", TRAINING)
    answer(tally, clock, "A", "train-reso", "reso (training)", "train", 10, wait=4, each=2)  # 24 s: 2.4 s an item
    tally.start_phase("A", BASELINES)
    answer(tally, clock, "A", "test-single-a", "single:a", "test", 5, wait=0, each=1)  # 1 s an item
    # Every run left has a pace now (the reso test run goes at the test runs'), but no fit has been timed.
    assert tally.job_eta() == (5 * 1 + 20 * 2.4 + 10 * 1 + 10 * 1, False)
    tally.start_phase("A", FITTING_CRM)
    assert tally.phase_eta() is None
    before = tally.job_total()
    clock.now += 30  # the fit: no run, nothing reported but the clock
    # Unknown, the fit adds to the elapsed time while it runs: the lower bound grows with it, never frozen.
    assert tally.job_total() == (before[0] + 30, False)
    tally.start_phase("A", TESTING_RESO)
    answer(tally, clock, "A", "test-reso", "reso", "test", 5, wait=0, each=3)  # 3 s an item
    clock.now += 4  # the reports, after the last run

    tally.start_phase("B", TRAINING)
    # Everything timed, on A (B is twice its size): B's runs at their kinds' paces, its fit at 2 x 30 s, its
    # other stages' own work at 2 x what A's took (4 s of reports after the test runs).
    expected = 20 * 2.4 + 10 * 1.0 + 10 * 3.0 + 2 * 30 + 2 * 4
    assert tally.job_eta() == (pytest.approx(expected), True)
    assert tally.benchmark_eta() == tally.job_eta()
    assert tally.job_total() == (pytest.approx(clock.now + expected), True)
    answer(tally, clock, "B", "train-reso", "reso (training)", "train", 20, wait=0, each=2.4)
    tally.start_phase("B", BASELINES)
    answer(tally, clock, "B", "test-single-a", "single:a", "test", 10, wait=0, each=1)
    tally.start_phase("B", FITTING_CRM)
    total = tally.job_total()
    assert tally.phase_eta() == pytest.approx(60) and total[1]
    clock.now += 20
    # During the fit its ETA counts down with the clock, and the job's time in all holds.
    assert tally.phase_eta() == pytest.approx(40)
    assert tally.job_eta() == (pytest.approx(40 + 30 + 8), True) and tally.job_total() == pytest.approx(total)
    clock.now += 50  # 10 s past what A's fit said
    # Overrun: the fit has nothing left to add, and the job's total is the elapsed time plus the work left,
    # never less.
    assert tally.phase_eta() == 0.0
    assert tally.job_eta() == (pytest.approx(30 + 8), True)
    assert tally.job_total() == (pytest.approx(clock.now + 30 + 8), True) and tally.job_total()[0] > total[0]


def test_plain_progress_writes_a_line_per_finished_run_and_nothing_else() -> None:
    clock = Clock()
    stream = io.StringIO()
    plain = PlainProgress(stream, Tally(clock=clock))
    plain.plan("Bench", PLAN)
    plain.start_phase("Bench", TRAINING)
    resumed = run("test-reso", "reso", "test", 5, done=2)
    plain.run_started(resumed)
    clock.now += 75
    for _ in range(3):
        plain.item_done(row(True))
    assert stream.getvalue() == ""
    plain.run_finished(resumed, {"n": 5, "accuracy": 0.8, "cost_usd": 1.25})
    plain.background("general CRM", True)
    plain.background("general CRM", False)
    assert stream.getvalue().splitlines() == [
        f"Bench · run 1/3 · reso: 5/5 items (2 done before), accuracy 80.0%, $1.2500, 1:15 → {Path('out/test-reso')}",
        "general CRM: fitted in a second process (0:00)"]


def test_the_live_display_shows_phase_run_and_benchmark_and_prints_lines_unhighlighted() -> None:
    file = io.StringIO()
    console = Console(file=file, width=80, force_terminal=True, color_system="truecolor")
    live = LiveProgress(console, Tally(clock=Clock()))
    live.plan("Bench", PLAN)
    live.start_phase("Bench", TRAINING)
    live.run_started(run("test-reso", "reso", "test", 5, done=2, correct=1))
    live.background("general CRM", True)
    screen = Console(file=io.StringIO(), width=80, record=True)
    screen.print(live.render())
    shown = [line.rstrip() for line in screen.export_text().splitlines()]
    assert shown[0].endswith("Bench · training ReSo · 0:00 elapsed")
    assert re.fullmatch(r"  reso +[━╸]+ +2/5 acc 50\.0%  \$0\.5000  ETA -:--", shown[1]), shown[1]
    assert re.fullmatch(r"  benchmark, run 1/3 +[━╸]+ +2/20 ETA -:--", shown[2]), shown[2]
    assert re.fullmatch(r"  job, benchmark 1/1 +[━╸]+ +2/20 ETA -:-- · > 0:00 in all", shown[3]), shown[3]
    assert shown[4] == "  general CRM: fitting in a second process (0:00)"
    # Above the display, a line is dimmed as a whole: no highlighter colours part of a model name or a path.
    file.seek(0), file.truncate()
    line = "run 2/14 · single:claude-3-5-sonnet-20240620/algebra: 6/6 items, $0.0120, 0:01"
    live.note(line)
    assert file.getvalue() == f"\x1b[2m{line}\x1b[0m\n"


def screen_lines(live: LiveProgress) -> list[str]:
    screen = Console(file=io.StringIO(), width=100, record=True)
    screen.print(live.render())
    return [line.rstrip() for line in screen.export_text().splitlines()]


def test_the_display_shows_the_jobs_eta_and_time_in_all_and_a_fits_timer() -> None:
    clock = Clock()
    tally = two_benchmarks(clock)
    live = LiveProgress(Console(file=io.StringIO(), width=100, force_terminal=True), tally)
    live.start_phase("A", TRAINING)
    answer(tally, clock, "A", "train-reso", "reso (training)", "train", 10, wait=0, each=2)
    live.start_phase("A", BASELINES)
    answer(tally, clock, "A", "test-single-a", "single:a", "test", 5, wait=0, each=1)
    live.start_phase("A", FITTING_CRM)
    clock.now += 15
    shown = screen_lines(live)
    # Not timed before: the job's ETA is a lower bound (A's reso run, 5 s, and B's runs, 40 + 10 + 10 s), and so
    # is its time in all (40 s so far and those 65 s).
    assert re.fullmatch(r"  job, benchmark 1/2 +[━╸]+ +15/60 ETA > 1:05 · > 1:45 in all", shown[2]), shown[2]
    assert shown[3] == "  fitting the CRM: 0:15, not timed before"
    clock.now += 15
    live.start_phase("A", TESTING_RESO)
    answer(tally, clock, "A", "test-reso", "reso", "test", 5, wait=0, each=1)
    live.start_phase("B", TRAINING)
    answer(tally, clock, "B", "train-reso", "reso (training)", "train", 20, wait=0, each=2)
    live.start_phase("B", BASELINES)
    answer(tally, clock, "B", "test-single-a", "single:a", "test", 10, wait=0, each=1)
    live.start_phase("B", FITTING_CRM)
    clock.now += 20
    first = screen_lines(live)
    assert first[0].endswith("B · fitting the CRM · 2:10 elapsed")
    # B is twice A's size: its fit should take 60 s, 40 left; then its 10 reso items at 1 s each.
    assert re.fullmatch(r"  job, benchmark 2/2 +[━╸]+ +50/60 ETA 0:50 · 3:00 in all", first[2]), first[2]
    assert first[3] == "  fitting the CRM: 0:20, ETA 0:40"
    clock.now += 10
    assert screen_lines(live)[3] == "  fitting the CRM: 0:30, ETA 0:30"


def test_the_live_display_redraws_while_a_fit_sends_no_event() -> None:
    clock = Clock()
    file = io.StringIO()
    with LiveProgress(Console(file=file, width=100, force_terminal=True), two_benchmarks(clock)) as live:
        live.start_phase("A", FITTING_CRM)
        clock.now += 75
        deadline = time.monotonic() + 10
        while "fitting the CRM: 1:15" not in file.getvalue() and time.monotonic() < deadline:
            time.sleep(0.05)
    assert "fitting the CRM: 1:15" in file.getvalue()


def test_only_a_real_terminal_gets_the_live_display(monkeypatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")  # set in some CI: rich then treats any stream as a terminal
    forced = Console(file=io.StringIO())
    assert forced.is_terminal and not is_live(forced)


def test_reso_demo_off_a_terminal_prints_one_plain_line_per_run_counting_resumed_items(tmp_path, monkeypatch):
    monkeypatch.setattr(config, "RESO_VARIANTS", {})
    monkeypatch.setattr(config, "ANSWER_VALUES", (0.01,))  # a sweep of one value of a right answer
    out = tmp_path / "demo"
    # A first job answers 3 test items a run; the command then extends every run to 6, resuming each.
    demo.run_demo(config.DemoConfig(out=out, world="two-model", train_limit=12, test_limit=3, concurrency=4),
                  log=lambda line: None)
    result = CliRunner().invoke(app, ["demo", "--world", "two-model", "--set", "demo.train_limit=12",
                                      "--set", "demo.test_limit=6", "--set", "demo.concurrency=4",
                                      "--out", str(out)],
                                env={"COLUMNS": "200", "FORCE_COLOR": "1"})
    assert result.exit_code == 0, (result.stderr, result.exception)
    assert "\x1b" not in result.stderr
    pattern = re.compile(r"GSM8K-MAS \(GPT-4 and Mixtral\) · run (\d+)/10 · (.+): (\d+)/(\d+) items "
                         r"\((\d+) done before\), accuracy \d+\.\d%, \$\d+\.\d{4}, \d+:\d\d → (.+)")
    runs = [match.groups() for line in result.stderr.splitlines() if (match := pattern.fullmatch(line))]
    folder = out / "gsm8k-mas"
    # After ReSo's row, one row per fine stage validation did not choose.
    chosen = json.loads((folder / "validation" / "choice.json").read_text())["stage"]
    others = [f"reso {label}" for stage, label in STAGE_LABELS.items() if stage != chosen]
    assert runs == [
        ("1", "reso (training)", "12", "12", "12", str(folder / "train-reso")),
        ("2", "single:gpt-4/arithmetic-word-problems", "6", "6", "3",
         str(folder / "test-single-gpt-4-arithmetic-word-problems")),
        ("3", "single:mixtral/arithmetic-word-problems", "6", "6", "3",
         str(folder / "test-single-mixtral-arithmetic-word-problems")),
        ("4", "oracle", "6", "6", "3", str(folder / "test-oracle")),
        ("5", "reso", "6", "6", "3", str(folder / "test-reso")),
        ("6", "reso (answer worth $0.01)", "6", "6", "3", str(folder / "test-reso-value-0.01")),
        *((str(7 + n), f"reso ({other.removeprefix('reso ')})", "6", "6", "3", str(folder / run_folder(other)))
          for n, other in enumerate(others)),
        ("10", "random", "6", "6", "3", str(folder / "test-random")),
    ]
    # Validation runs again (it refits its CRM): its two lines name numbers of their own.
    validation = re.compile(r"validation: 3 composites; .*|fine stage: chosen on 3 validation composites .*: "
                            rf"the {STAGE_LABELS[FineStage(chosen)]}")
    assert sum(bool(validation.fullmatch(line)) for line in result.stderr.splitlines()) == 2
    others = [line for line in result.stderr.splitlines()
              if not pattern.fullmatch(line) and not validation.fullmatch(line)]
    assert sorted(re.sub(r"\(\d+:\d\d\)", "(T)", line) for line in others) == sorted([
        "baseline left out: vote:3 needs 3 models; pool 'gsm8k-two-model-replay' has 2",
        f"CRM fitted on the training split: calibrated:{folder / 'crm-calibrated'}",
        "general CRM: fitted in a second process (T)"])
