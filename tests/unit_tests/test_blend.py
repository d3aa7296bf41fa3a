"""Blends: weighted means of scorers from YAML, and clear errors for bad configuration files."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from reso.reward.base import Score, ScoreItem, Scorer
from reso.reward.blend import BlendScorer, read_blend_config
from reso.reward.config_error import ScorerConfigError
from reso.reward.registry import build_scorer


class Constant(Scorer):
    def __init__(self, value: float, reason: str | None = None) -> None:
        self.value, self.reason = value, reason

    def score_detailed(self, items: Sequence[ScoreItem]) -> list[Score]:
        return [Score(self.value, self.reason) for _ in items]


ITEMS = [
    ScoreItem(subtask="q", answer="16 - 3 = 13, so #### 13", group="g"),
    ScoreItem(subtask="q", answer="16 - 3 = 12, so #### 12", group="g"),
]


def _write(tmp_path: Path, text: str, name: str = "blend.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_weighted_mean_with_normalised_weights_and_prefixed_reasons() -> None:
    blend = BlendScorer(
        [("a", Constant(1.0), 3.0), ("b", Constant(0.0, "why not"), 1.0), ("c", Constant(0.2), 0.0)]
    )
    [score] = blend.score_detailed(ITEMS[:1])
    assert score.value == pytest.approx(0.75)
    assert score.reason == "b: why not"
    assert [name for name, _, _ in blend.members] == ["a", "b"]


def test_blend_from_yaml_matches_its_members(tmp_path: Path) -> None:
    path = _write(tmp_path, "scorers:\n  - {kind: steps, weight: 0.5}\n  - {kind: consensus, weight: 0.5}\n")
    blend = build_scorer(path)
    steps, consensus = build_scorer("steps").score(ITEMS), build_scorer("consensus").score(ITEMS)
    expected = [0.5 * s + 0.5 * c for s, c in zip(steps, consensus, strict=True)]
    assert blend.score(ITEMS) == pytest.approx(expected)
    assert build_scorer(f"blend:{path}").score(ITEMS) == pytest.approx(expected)
    assert build_scorer(str(path)).score(ITEMS) == pytest.approx(expected)


def test_member_settings_pass_through(tmp_path: Path) -> None:
    path = _write(tmp_path, "scorers:\n  - kind: steps\n    prior_weight: 0\n")
    [member] = build_scorer(path).members
    assert member[1].prior_weight == 0


async def test_async_blend_gives_the_same_values(tmp_path: Path) -> None:
    path = _write(tmp_path, "scorers:\n  - {kind: steps, weight: 1}\n  - {kind: consensus, weight: 2}\n")
    blend = build_scorer(path)
    assert await blend.ascore_detailed(ITEMS) == blend.score_detailed(ITEMS)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("scorers: [", "not valid YAML (line"),
        ("- steps\n", "expected a mapping with a 'scorers' list"),
        ("scorer: []\n", "unknown field 'scorer'"),
        ("scorers: []\n", "scorers: must be a non-empty list"),
        ("scorers:\n  - steps\n", "scorers[0] (line 2): must be a mapping"),
        ("scorers:\n  - {weight: 1}\n", "scorers[0] (line 2).kind: must be a scorer spec"),
        (
            "scorers:\n  - {kind: steps}\n  - {kind: rule, weight: -1}\n",
            "scorers[1] (line 3).weight: must be a finite",
        ),
        ("scorers:\n  - {kind: steps, weight: yes}\n", "scorers[0] (line 2).weight"),
        ("scorers:\n  - {kind: steps, weight: 0}\n", "every weight is 0"),
        ("scorers:\n  - {kind: stepz, weight: 1}\n", "scorers[0] (line 2): unknown scorer kind 'stepz'"),
        (
            "scorers:\n  - {kind: steps, prior: 2}\n",
            "unknown setting 'prior' for 'steps' (accepted: prior_weight",
        ),
        ("scorers:\n  - {kind: steps, prior_weight: -2}\n", "scorers[0] (line 2): prior_weight must be >= 0"),
    ],
)
def test_bad_configs_name_the_file_entry_and_field(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(ScorerConfigError) as caught:
        build_scorer(path)
    assert str(path) in str(caught.value)
    assert message in str(caught.value)


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ScorerConfigError, match="blend config file not found"):
        build_scorer(tmp_path / "absent.yaml")


def test_nested_blends_work_and_self_inclusion_is_refused(tmp_path: Path) -> None:
    inner = _write(tmp_path, "scorers:\n  - {kind: steps}\n", "inner.yaml")
    outer = _write(
        tmp_path, f"scorers:\n  - {{kind: 'blend:{inner}', weight: 1}}\n  - {{kind: consensus}}\n", "o.yaml"
    )
    assert isinstance(build_scorer(outer), BlendScorer)
    loop = _write(tmp_path, f"scorers:\n  - {{kind: 'blend:{tmp_path / 'loop.yaml'}'}}\n", "loop.yaml")
    with pytest.raises(ScorerConfigError, match="includes itself"):
        build_scorer(loop)


def test_read_blend_config_accepts_a_mapping() -> None:
    entries = read_blend_config({"scorers": [{"kind": "steps", "weight": 2}, {"kind": "rule", "weight": 0}]})
    assert [(entry.kind, entry.weight) for entry in entries] == [("steps", 2.0)]


def test_blend_scorer_refuses_bad_weights() -> None:
    with pytest.raises(ValueError, match="positive weight"):
        BlendScorer([("a", Constant(1.0), 0.0)])
    with pytest.raises(ValueError, match="finite number"):
        BlendScorer([("a", Constant(1.0), float("nan"))])


def test_a_member_that_fails_is_left_out_and_all_failing_fails_the_item() -> None:
    from reso.reward.base import SCORER_FAILED, Score, ScoreItem, Scorer, failed_score

    class Fixed(Scorer):
        def __init__(self, scores: list[Score]) -> None:
            self.scores = scores

        def score_detailed(self, items):  # type: ignore[no-untyped-def]
            return list(self.scores)

    broken = Fixed([failed_score("judge call failed: timeout"), failed_score("judge call failed: timeout")])
    working = Fixed([Score(0.8), failed_score("no finite PRM score")])
    blend = BlendScorer([("judge", broken, 3.0), ("prm", working, 1.0)])
    first, second = blend.score_detailed([ScoreItem(subtask="q", answer="a"), ScoreItem(subtask="q", answer="b")])
    # The judge failed on the first item: the PRM's 0.8 alone, not 0.25 * 0.8 + 0.75 * 0.5.
    assert first.value == pytest.approx(0.8) and not first.failed
    assert first.reason == "judge left out: judge call failed: timeout"
    assert second.failed and second.value == 0.5 and second.reason.startswith(SCORER_FAILED)
    assert "judge: scorer failed: judge call failed: timeout" in second.reason
