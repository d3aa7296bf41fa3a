"""Settings that name a kind: each value becomes its enum member, still the same text in JSON, and a wrong
value is one error naming the field and the allowed values."""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest

from reso.agents.dadb.base import Mode
from reso.agents.selection.config import Variant
from reso.graphs.escalation import EscalateTo
from reso.graphs.planners.base import PlannerName
from reso.graphs.settings import ContextPolicy, Integration, ReSoSettings, Schedule, SelectionPolicy

KINDS = {"planner": PlannerName, "escalate_to": EscalateTo, "integration": Integration, "selection": SelectionPolicy,
         "score_variant": Variant, "mode": Mode, "context_policy": ContextPolicy, "schedule": Schedule}


@pytest.mark.parametrize(("name", "kind"), KINDS.items())
def test_each_kind_setting_takes_its_names_as_members(name: str, kind: type) -> None:
    for member in kind:
        settings = ReSoSettings().replace(**{name: member.value})
        assert getattr(settings, name) is member
    assert getattr(ReSoSettings(), name) in set(kind)


@pytest.mark.parametrize(("name", "kind"), KINDS.items())
def test_a_wrong_name_is_refused_naming_the_field_and_the_choices(name: str, kind: type) -> None:
    with pytest.raises(ValueError) as error:
        ReSoSettings().replace(**{name: "nonsense"})
    assert str(error.value) == f"unknown {name} 'nonsense'; choose one of {', '.join(m.value for m in kind)}"


def test_settings_stay_plain_text_in_json_and_equal_to_the_text() -> None:
    settings = ReSoSettings().replace({"selection.variant": "kl-ucb", "plan.planner": "llm"}, mode="train")
    assert json.loads(json.dumps(asdict(settings)))["score_variant"] == "kl-ucb"
    assert settings == ReSoSettings().replace({"selection.variant": Variant.KL_UCB, "plan.planner": PlannerName.LLM}, mode=Mode.TRAIN)
    assert hash(settings) == hash(ReSoSettings().replace({"selection.variant": Variant.KL_UCB, "plan.planner": PlannerName.LLM}, mode=Mode.TRAIN))
    assert settings.mode == "train" and f"{settings.score_variant}" == "kl-ucb"
