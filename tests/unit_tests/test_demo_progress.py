"""`reso demo`'s progress: the tally counts resumed items as done and takes its paces from the items
answered now; off a terminal the command prints one plain line per finished run (no escape codes), and on
one the display shows the run and the benchmark with their ETAs, its lines never highlighted."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

from rich.console import Console
from typer.testing import CliRunner

from reso.evals.cli import app
from reso.evals.cli.demo_progress import LiveProgress, PlainProgress, is_live
from reso.evals.cli.demo_tally import Tally, eta_text
from reso.evals.jobs import config, demo
from reso.evals.jobs.events import TRAINING, WAITING_FOR_CRM, PlannedRun, RunStart


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

    single = run("test-single-a", "single:a", "test", 5)
    tally.run_started(single)
    clock.now += 1
    tally.item_done(row(True))
    assert tally.run_eta() == 4.0 and tally.benchmark_eta() == (4.0, False)
    clock.now += 4
    for _ in range(4):
        tally.item_done(row(True))
    tally.run_finished(single, {"n": 5})  # test pace: 1 s an item

    resumed = run("test-reso", "reso", "test", 5, done=2, correct=1)
    tally.run_started(resumed)
    assert tally.items() == (17, 20)
    # No reso run has a pace yet: the test runs' pace stands in, for the 3 items left.
    assert tally.run_eta() == 3.0 and tally.benchmark_eta() == (3.0, True)
    assert tally.current is not None and (tally.current.done, tally.current.correct) == (2, 1)
    tally.run_finished(resumed, {"n": 5})
    # Waiting for a task in another process: how long it takes is not foreseen, the ETA is a lower bound.
    tally.background_changed("general CRM", True)
    tally.start_stage("Bench", WAITING_FOR_CRM)
    assert tally.benchmark_eta() == (0.0, False)
    tally.background_changed("general CRM", False)
    assert tally.benchmark_eta() == (0.0, True) and tally.items() == (20, 20)


def test_plain_progress_writes_a_line_per_finished_run_and_nothing_else() -> None:
    clock = Clock()
    stream = io.StringIO()
    plain = PlainProgress(stream, Tally(clock=clock))
    plain.plan("Bench", PLAN)
    plain.start_stage("Bench", TRAINING)
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


def test_the_live_display_shows_stage_run_and_benchmark_and_prints_lines_unhighlighted() -> None:
    file = io.StringIO()
    console = Console(file=file, width=80, force_terminal=True, color_system="truecolor")
    live = LiveProgress(console, Tally(clock=Clock()))
    live.plan("Bench", PLAN)
    live.start_stage("Bench", TRAINING)
    live.run_started(run("test-reso", "reso", "test", 5, done=2, correct=1))
    live.background("general CRM", True)
    screen = Console(file=io.StringIO(), width=80, record=True)
    screen.print(live.render())
    shown = [line.rstrip() for line in screen.export_text().splitlines()]
    assert shown[0].endswith("Bench · training ReSo · 0:00 elapsed")
    assert re.fullmatch(r"  reso +[━╸]+ +2/5 acc 50\.0%  \$0\.5000  ETA -:--", shown[1]), shown[1]
    assert re.fullmatch(r"  benchmark, run 1/3 +[━╸]+ +2/20 ETA -:--", shown[2]), shown[2]
    assert shown[3] == "  general CRM: fitting in a second process (0:00)"
    # Above the display, a line is dimmed as a whole: no highlighter colours part of a model name or a path.
    file.seek(0), file.truncate()
    line = "run 2/14 · single:claude-3-5-sonnet-20240620/algebra: 6/6 items, $0.0120, 0:01"
    live.note(line)
    assert file.getvalue() == f"\x1b[2m{line}\x1b[0m\n"


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
    result = CliRunner().invoke(app, ["demo", "--world", "two-model", "--train-limit", "12", "--test-limit", "6",
                                      "--concurrency", "4", "--out", str(out)],
                                env={"COLUMNS": "200", "FORCE_COLOR": "1"})
    assert result.exit_code == 0, (result.stderr, result.exception)
    assert "\x1b" not in result.stderr
    pattern = re.compile(r"GSM8K-MAS \(GPT-4 and Mixtral\) · run (\d+)/9 · (.+): (\d+)/(\d+) items "
                         r"\((\d+) done before\), accuracy \d+\.\d%, \$\d+\.\d{4}, \d+:\d\d → (.+)")
    runs = [match.groups() for line in result.stderr.splitlines() if (match := pattern.fullmatch(line))]
    folder = out / "gsm8k-mas"
    assert runs == [
        ("1", "reso (training)", "12", "12", "12", str(folder / "train-reso")),
        ("2", "single:gpt-4/arithmetic-word-problems", "6", "6", "3",
         str(folder / "test-single-gpt-4-arithmetic-word-problems")),
        ("3", "single:mixtral/arithmetic-word-problems", "6", "6", "3",
         str(folder / "test-single-mixtral-arithmetic-word-problems")),
        ("4", "oracle", "6", "6", "3", str(folder / "test-oracle")),
        ("5", "reso", "6", "6", "3", str(folder / "test-reso")),
        ("6", "reso (answer worth $0.01)", "6", "6", "3", str(folder / "test-reso-value-0.01")),
        ("7", "reso (peer stage)", "6", "6", "3", str(folder / "test-reso-peer-stage")),
        ("8", "reso (peer stage on records)", "6", "6", "3", str(folder / "test-reso-peer-stage-on-records")),
        ("9", "random", "6", "6", "3", str(folder / "test-random")),
    ]
    # Validation runs again (it refits its CRM): its two lines name numbers of their own.
    validation = re.compile(r"validation: 3 composites; .*|fine stage: chosen on 3 validation composites .*: "
                            r"the CRM stage")
    assert sum(bool(validation.fullmatch(line)) for line in result.stderr.splitlines()) == 2
    others = [line for line in result.stderr.splitlines()
              if not pattern.fullmatch(line) and not validation.fullmatch(line)]
    assert sorted(re.sub(r"\(\d+:\d\d\)", "(T)", line) for line in others) == sorted([
        "baseline left out: vote:3 needs 3 models; pool 'gsm8k-two-model-replay' has 2",
        f"CRM fitted on the training split: calibrated:{folder / 'crm-calibrated'}",
        "general CRM: fitted in a second process (T)"])
