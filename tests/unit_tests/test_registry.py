"""The scorer registry: spec strings, mappings, lazy registrations and helpful errors."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from reso.agents.adapters.tools import CalculatorChatModel
from reso.reward import registry
from reso.reward.base import Score, ScoreItem, Scorer
from reso.reward.config_error import ScorerConfigError
from reso.reward.consensus import ConsensusScorer
from reso.reward.judge import JudgeScorer
from reso.reward.registry import build_scorer, register_scorer, scorer_kinds
from reso.reward.rule import RuleScorer
from reso.reward.steps import StepVerifierScorer


class Echo(Scorer):
    name = "echo"

    def __init__(self, value: str = "0.5", *, scale: float = 1.0, shared: object = None) -> None:
        self.value, self.scale, self.shared = float(value), scale, shared

    def score_detailed(self, items: Sequence[ScoreItem]) -> list[Score]:
        return [Score(self.value * self.scale) for _ in items]


@pytest.fixture
def clean_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_FACTORIES", dict(registry._FACTORIES))


def test_builtin_kinds() -> None:
    assert {"rule", "consensus", "steps", "judge", "prm", "small", "blend"} <= set(scorer_kinds())
    assert isinstance(build_scorer("rule"), RuleScorer)
    assert isinstance(build_scorer(" consensus "), ConsensusScorer)
    assert isinstance(build_scorer({"kind": "steps", "prior_weight": 0.0}), StepVerifierScorer)
    assert build_scorer({"kind": "rule", "rel_tol": 0.05}).rel_tol == 0.05


def test_a_ready_scorer_is_returned_as_it_is() -> None:
    scorer = RuleScorer()
    assert build_scorer(scorer) is scorer


def test_judge_takes_a_chat_model_dependency_or_a_spec() -> None:
    model = GenericFakeChatModel(messages=iter([AIMessage(content="Yes")]))
    judge = build_scorer("judge", chat_model=model, unrelated=object())
    assert isinstance(judge, JudgeScorer) and judge.model is model
    # A spec goes through the agents layer's loader: an offline one, so no key or network is needed.
    judge = build_scorer({"kind": "judge:tool:calculator", "max_concurrency": 2})
    assert isinstance(judge.model, CalculatorChatModel) and judge.max_concurrency == 2


def test_registering_a_kind_with_a_lazy_path(clean_registry: None) -> None:
    register_scorer("echo", f"{__name__}:Echo")
    scorer = build_scorer("echo:0.25", shared="dep", ignored="not offered")
    assert isinstance(scorer, Echo) and scorer.value == 0.25 and scorer.shared == "dep"
    assert build_scorer({"kind": "echo", "scale": 2.0}).score([ScoreItem(subtask="q", answer="a")]) == [1.0]
    with pytest.raises(ValueError, match="already registered"):
        register_scorer("echo", Echo)
    register_scorer("echo", Echo, replace=True)
    assert "echo" in scorer_kinds()


def test_registration_refuses_bad_names(clean_registry: None) -> None:
    for kind in ("", "a:b", "with space"):
        with pytest.raises(ValueError, match="scorer kind must be"):
            register_scorer(kind, Echo)
    with pytest.raises(ValueError, match="built in"):
        register_scorer("blend", Echo)
    with pytest.raises(ValueError, match="module:attribute"):
        register_scorer("lazy", "no_colon_here")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nope", "unknown scorer kind 'nope' (known: blend, calibrated, consensus"),
        ("rule:x", "takes no ':<argument>'"),
        ({"kind": "steps", "foo": 1}, "unknown setting 'foo' for 'steps' (accepted: prior_weight, rel_tol)"),
        ({"kind": "rule", "rel_tol": 2}, "rel_tol must be in [0, 1)"),
        ({"rel_tol": 2}, "needs a 'kind' string"),
        ("judge", "the judge needs a model"),
        ("blend:", "write 'blend:<file.yaml>'"),
        ("", "non-empty string"),
        (42, "non-empty string"),
    ],
)
def test_bad_specs_say_what_is_wrong(spec: object, message: str) -> None:
    with pytest.raises(ScorerConfigError) as caught:
        build_scorer(spec)  # type: ignore[arg-type]
    assert message in str(caught.value)


def test_a_kind_whose_module_is_missing_fails_with_its_name(clean_registry: None) -> None:
    register_scorer("ghost", "reso.reward.no_such_module:Ghost")
    with pytest.raises(ScorerConfigError, match="needs reso.reward.no_such_module, which failed to import"):
        build_scorer("ghost")


def test_a_factory_must_return_a_scorer(clean_registry: None) -> None:
    register_scorer("notascorer", lambda: object())
    with pytest.raises(ScorerConfigError, match="not a Scorer"):
        build_scorer("notascorer")
