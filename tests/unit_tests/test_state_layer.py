"""The graph state sits at the bottom of the graph modules, and a result reads the usage the graph totalled."""

from __future__ import annotations

import subprocess
import sys

from reso.graphs.run_records import CandidateRecord, Result, StepRecord, Usage, state_steps


def test_the_state_schema_imports_none_of_the_graphs_built_on_it() -> None:
    code = ("import sys, reso.graphs.state; "
            "print(sorted(m for m in sys.modules if m.startswith('reso.graphs.')))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    for above in ("compile", "run", "subtask", "context", "team", "graph", "api"):
        assert f"'reso.graphs.{above}'" not in loaded, f"reso.graphs.state loads reso.graphs.{above}"


def _step() -> StepRecord:
    candidate = CandidateRecord(agent_id="a", model="fake:m", role="r", answer="4", value="4",
                                input_tokens=3, output_tokens=4, cost_usd=0.25)
    return StepRecord(id="final", instruction="2 + 2?", depends_on=[], status="done", agent="a", answer="4",
                      value="4", candidates=[candidate])


def test_a_result_takes_the_usage_the_answer_node_totalled() -> None:
    totalled = Usage(calls=9, input_tokens=1, output_tokens=2, cost_usd=0.5)
    state = {"question": "2 + 2?", "plan": [{"id": "final", "instruction": "2 + 2?", "depends_on": []}],
             "steps": state_steps({"final": _step()}), "usage": totalled.to_json()}
    assert Result.from_state(state).usage == totalled, "read, not totalled again"
    unanswered = {key: value for key, value in state.items() if key != "usage"}
    assert Result.from_state(unanswered).usage == Usage(calls=1, input_tokens=3, output_tokens=4, cost_usd=0.25)
