"""`reso eval`'s response cache: inside `--out` by default (a run writes nothing beside it), and shared when
runs name one `run.cache_file`: an identical run into a new folder is then served without model calls and
reports the same accuracy, tokens and cost."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reso.agents.adapters.cache import disable_response_cache
from reso.agents.adapters.replay import NoRecordingError, ReplayChatModel
from reso.agents.defaults import two_model_pool_path
from reso.evals.cli import app


@dataclass
class Calls:
    """Calls that reached a replay model (a cache hit never does): answered, and refused for want of a
    recording (the integration step offered to a model; errors are never cached, so these repeat)."""

    answered: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


@pytest.fixture
def model_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[Calls]:
    calls = Calls()
    real = ReplayChatModel._generate

    def counting(self: ReplayChatModel, *args, **kwargs):
        try:
            result = real(self, *args, **kwargs)
        except NoRecordingError:
            calls.refused.append(self.recorded_model)
            raise
        calls.answered.append(self.recorded_model)
        return result

    monkeypatch.setattr(ReplayChatModel, "_generate", counting)
    yield calls
    disable_response_cache()


def _eval(out: Path, *extra: str) -> dict:
    # GSM8K-MAS is made of the two-model pool's recorded questions.
    result = CliRunner().invoke(app, ["eval", "--dataset", "gsm8k-mas-easy-test", "--limit", "3", "--out", str(out),
                                      "--pool", str(two_model_pool_path()), "--quiet", *extra])
    assert result.exit_code == 0, result.output
    return json.loads((out / "summary.json").read_text())


def test_identical_run_into_a_new_folder_makes_no_model_calls(tmp_path: Path, model_calls: Calls) -> None:
    # The paper's fixed k = 2: both models answer every sub-question.
    shared = ("--set", f"run.cache_file={tmp_path / 'responses.sqlite'}", "--set", "asking.rule=fixed")
    first = _eval(tmp_path / "first", *shared)
    answered, refused = len(model_calls.answered), len(model_calls.refused)
    # Three items of three sub-questions, each answered by at least one recorded model, both models used.
    assert answered >= 9
    assert set(model_calls.answered) == {"gpt-4-1106-preview", "mistralai/Mixtral-8x7B-Instruct-v0.1"}
    second = _eval(tmp_path / "second", *shared)
    assert len(model_calls.answered) == answered
    assert len(model_calls.refused) == 2 * refused
    assert (tmp_path / "responses.sqlite").is_file()
    assert not (tmp_path / "first" / "responses.sqlite").exists()
    for key in ("n", "accuracy", "total_tokens", "cost_usd"):
        assert second[key] == first[key], key
    assert first["n"] == 3 and first["total_tokens"] > 0 and first["cost_usd"] > 0


def test_no_cache_and_an_explicit_cache_file(tmp_path: Path, model_calls: Calls) -> None:
    own = tmp_path / "elsewhere" / "mine.sqlite"
    _eval(tmp_path / "a", "--set", f"run.cache_file={own}")
    answered = len(model_calls.answered)
    assert answered >= 9 and own.is_file() and not (tmp_path / "responses.sqlite").exists()
    _eval(tmp_path / "b", "--set", "run.cache=false")
    assert len(model_calls.answered) == 2 * answered
