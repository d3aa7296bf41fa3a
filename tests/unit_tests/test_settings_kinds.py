"""Settings that name a kind: each value becomes its enum member, still the same text in JSON, and a wrong
value is one error naming the key and the allowed values."""

from __future__ import annotations

import json

import pytest

from reso.agents.dadb.base import Mode
from reso.agents.selection.config import Variant
from reso.graphs.escalation import AskingRule, EscalateTo
from reso.graphs.plan_settings import ContextPolicy, Integration, PlannerName, Schedule
from reso.graphs.settings import ReSoSettings

KINDS = {"plan.planner": PlannerName, "asking.escalate_to": EscalateTo, "plan.integration": Integration,
         "selection.variant": Variant, "mode": Mode, "plan.context": ContextPolicy, "plan.schedule": Schedule,
         "asking.rule": AskingRule}


def _value(settings: ReSoSettings, key: str) -> object:
    return settings.values()[key]


@pytest.mark.parametrize(("key", "kind"), KINDS.items())
def test_each_kind_setting_takes_its_names_as_members(key: str, kind: type) -> None:
    for member in kind:
        changes = {key: member.value}
        if member == AskingRule.CONFIDENCE:  # the confidence rule reads two more settings
            changes |= {"asking.confidence": 0.8, "asking.k_max": 3}
        assert _value(ReSoSettings().with_changes(changes), key) is member
    assert _value(ReSoSettings(), key) in set(kind)


@pytest.mark.parametrize(("key", "kind"), KINDS.items())
def test_a_wrong_name_is_refused_naming_the_key_and_the_choices(key: str, kind: type) -> None:
    with pytest.raises(ValueError) as error:
        ReSoSettings().with_changes({key: "nonsense"}, where="my.yaml")
    message = str(error.value)
    assert message.startswith(f"my.yaml: {key}: ") and message.endswith("got 'nonsense'")
    assert all(f"'{member.value}'" in message for member in kind)


def test_a_section_built_in_python_checks_its_kinds_too() -> None:
    from reso.graphs.escalation import AskingConfig

    with pytest.raises(ValueError, match="unknown asking.rule 'sometimes'; choose one of priced, confidence, fixed"):
        AskingConfig(rule="sometimes")  # type: ignore[arg-type]


def test_settings_stay_plain_text_in_json_and_equal_to_the_text() -> None:
    settings = ReSoSettings().replace({"selection.variant": "kl-ucb", "plan.planner": "llm"}, mode="train")
    assert json.loads(json.dumps(settings.values()))["selection.variant"] == "kl-ucb"
    same = ReSoSettings().replace({"selection.variant": Variant.KL_UCB, "plan.planner": PlannerName.LLM},
                                  mode=Mode.TRAIN)
    assert settings == same and hash(settings) == hash(same)
    assert settings.mode == "train" and f"{settings.selection.variant}" == "kl-ucb"
