"""report.html in a real browser: a tiny scripted evaluation's page opened in headless Chromium shows the
accuracy, an item's chosen agent and the DAG's step nodes, the agents by model name and the items by id, and
renders to a screenshot that is not blank at 1400 and at 800 pixels wide.

Needs a Chromium binary (Debian's `chromium` package; `.ci/run` installs it); skips when there is none, and
fails so under CI (`tests/resources.py`).
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from reso.evals.datasets import Problem
from reso.evals.eval_config import EvalConfig, RunOptions
from reso.evals.methods import parse_method
from reso.evals.reports.report import write_run_report
from reso.evals.runner import run_eval
from reso.graphs.settings import ReSoSettings
from tests.engine_fakes import ScriptedAnswerer, scripted_team
from tests.resources import unavailable

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
         "--hide-scrollbars"]


@pytest.fixture(scope="module")
def browser() -> str:
    found = next((path for name in BROWSERS if (path := shutil.which(name))), None)
    if found is None:
        unavailable("no Chromium binary on PATH (apt-get install chromium)")
    return found


def _problems() -> list[Problem]:
    problems = []
    for index in range(3):
        plan = [{"id": "0", "instruction": f"Q{index} part A", "depends_on": []},
                {"id": "1", "instruction": f"Q{index} part B", "depends_on": ["0"]},
                {"id": "final", "instruction": "Please calculate the value of Answer[0]*Answer[1].",
                 "depends_on": ["0", "1"]}]
        problems.append(Problem(id=f"p{index}", question=f"question {index}", answer=str((index + 2) * 3),
                                plan=plan, subtask_answers={"0": str(index + 2), "1": "3"}))
    return problems


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scripted three-item run (item p2 answered wrong) with its reports written."""
    problems = _problems()
    answers = {f"Q{i} part A": f"\\boxed{{{i + 2 + (i == 2)}}}" for i in range(3)}
    answers.update({f"Q{i} part B": "\\boxed{3}" for i in range(3)})
    strong = ScriptedAnswerer(answers=answers, calls=[])

    def choose(subtask: str) -> list[str]:
        return ["calc"] if subtask.startswith("Please calculate") else ["strong"]

    team = scripted_team({"strong": strong}, choose)
    out = tmp_path_factory.mktemp("html") / "run"
    config = EvalConfig(dataset="unit", method=parse_method("reso", team.pool), out=out,
                        settings=ReSoSettings(mode="test"), command=["reso", "eval"], run=RunOptions(concurrency=2))
    asyncio.run(run_eval(config, problems, team))
    write_run_report(out)
    return out


def _chromium(browser: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    # A private profile folder: no state shared with other runs, nothing written to the home folder.
    profile = cwd / "profile"
    return subprocess.run([browser, *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True,
                          text=True, timeout=120, cwd=cwd)


def test_the_rendered_page_shows_accuracy_agents_and_dag(browser, run_dir, tmp_path):
    result = _chromium(browser, "--dump-dom", (run_dir / "report.html").as_uri(), cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    dom = result.stdout
    assert '<b id="accuracy">66.7%</b>' in dom
    assert "20.8% – 93.9%" in dom  # Wilson interval of 2 of 3
    assert '<td class="agent">strong</td>' in dom and '<td class="agent">calc</td>' in dom
    for step in ("0", "1", "final"):
        assert dom.count(f'data-step="{step}"') == 6  # an SVG node and a table row per item
    assert dom.count("<line ") == 9  # three dependencies per item, three items
    assert 'class="step bad" data-step="0"' in dom  # p2's first sub-answer was wrong


def test_the_page_names_agents_by_model_and_lists_items_by_id(browser, run_dir, tmp_path):
    result = _chromium(browser, "--dump-dom", (run_dir / "report.html").as_uri(), cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    dom = result.stdout
    # The scripted agents' specs are fake:<id>; the table shows the model's name, not the spec.
    assert "<td>strong</td><td><code>strong</code></td>" in dom and "fake:" not in dom
    assert [dom.index(f'id="item-p{i}"') for i in range(3)] == sorted(dom.index(f'id="item-p{i}"') for i in range(3))


@pytest.mark.parametrize("width", [1400, 800])
def test_the_screenshot_is_not_blank(browser, run_dir, tmp_path, width):
    shot = tmp_path / "page.png"
    result = _chromium(browser, f"--screenshot={shot}", f"--window-size={width},900",
                       (run_dir / "report.html").as_uri(), cwd=tmp_path)
    assert result.returncode == 0 and shot.exists(), result.stderr[-2000:]
    import matplotlib.image

    pixels = np.asarray(matplotlib.image.imread(shot))[..., :3]
    assert pixels.shape[:2] == (900, width)
    dark = (pixels.mean(axis=2) < 0.5).mean()
    assert pixels.std() > 0.05 and 0.005 < dark < 0.5, (pixels.std(), dark)  # text and table lines, not a blank page
