"""A checkpointed run on PostgreSQL: killed mid-question and resumed from the server's checkpoint.

The mirror of test_crash_resume's SQLite checkpoint test, with the checkpoint (LangGraph's
AsyncPostgresSaver) and the DADB in one database of the session's throwaway server. The resume names the
server by the other URL scheme, as another machine's configuration might: it is the same store, so the
finished subtasks are not asked again and the thread is learned once.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from reso.agents.dadb.open import open_dadb
from tests.integration_tests.test_crash_resume import ROOT, _env, _lines, kill_while_step_c_runs

pytestmark = pytest.mark.integration


def _child(checkpoint: str, log) -> list[str]:
    return [sys.executable, "-m", "tests.integration_tests.checkpoint_child", checkpoint, str(log)]


def test_a_run_killed_mid_question_resumes_from_the_postgres_checkpoint(tmp_path, postgres_url):
    log = tmp_path / "calls.log"
    kill_while_step_c_runs(_child(postgres_url, log), log)
    assert _lines(log) == ["Step A", "Step B", "Step C"]
    assert open_dadb(postgres_url, mode="test").total_visits() == 0, "a checkpointed run learns when answered"

    elsewhere = postgres_url.replace("postgresql://", "postgres://", 1)
    resumed = subprocess.run(_child(elsewhere, log), cwd=ROOT, env=_env(), capture_output=True, text=True,
                             timeout=60)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    result = json.loads(resumed.stdout.strip().splitlines()[-1])
    assert result["answer"] == "24" and result["status"] == "done"
    assert result["steps"] == {"0": "2", "1": "3", "2": "4", "final": "24"}
    assert _lines(log) == ["Step A", "Step B", "Step C", "Step C"], "only the subtask in flight is asked again"
    assert result["visits"] == result["candidates"] == 4

    again = subprocess.run(_child(postgres_url, log), cwd=ROOT, env=_env(), capture_output=True, text=True,
                           timeout=60)
    assert again.returncode == 0, again.stderr[-2000:]
    dadb = open_dadb(postgres_url, mode="test")
    assert dadb.total_visits() == 4, "solving a finished thread again, by either URL, learns nothing more"
    assert [key.rsplit("#", 1)[1] for key in dadb.applied_keys()] == ["crash-test"]
