"""Run-time settings of a ReSo run: the `settings` of its LangGraph context (`reso.graphs.context.RunContext`).

The settings are a tree (`reso.graphs.settings_tree`): a few run-wide settings (the pool, the DADB, train or
test, the seed, and the budget knob `answer_value_usd`) and one section per part of the engine, each declared
by the code that acts on it and handed to it unchanged:

| section     | declared by                                   | acts on it                                |
|-------------|-----------------------------------------------|-------------------------------------------|
| `plan`      | `reso.graphs.plan_settings.PlanSettings`      | the planner and the DAG run               |
| `selection` | `reso.agents.selection.config.SelectorConfig` | the coarse stage (`policies`, `selector`) |
| `asking`    | `reso.graphs.asking_config.AskingConfig`      | the fine stage (`policy_for`)             |
| `reward`    | `reso.reward.settings.RewardSettings`         | the CRM (`reso.reward.registry`)          |
| `limits`    | `reso.graphs.limits.QuestionLimits`           | each question's budget and call timeout   |

Every setting has a default that runs offline on the default pool (with its trained DADB). Environment
variables are never read here: callers (the CLI, Studio's assistant context, the Python API) pass settings
explicitly, as an instance, a mapping nested by section, or dotted keys (`with_changes({"asking.k": 3})`), or a
settings file (`load`). Settings are frozen, so hashable: the team built for them is kept per settings object
(`reso.graphs.team.team_for`). A setting that takes one of a few names has a `StrEnum` type; building the settings
turns the text into its member, or raises a `ValueError` naming the key and the allowed values.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reso.agents.dadb.base import Mode
from reso.agents.selection.config import SelectorConfig, check_answer_value
from reso.agents.selection.policies import selection_policy
from reso.graphs.asking_config import AskingConfig
from reso.graphs.limits import QuestionLimits
from reso.graphs.plan_settings import PlanSettings
from reso.graphs.settings_tree import apply, flat_values, load_settings_file, settings_of
from reso.reward.settings import RewardSettings

DEFAULT_ANSWER_VALUE_USD = 0.05
"""What a right answer to a question is worth when the settings do not say: five cents, fixed before any run
(not chosen on results)."""


@dataclass(kw_only=True, frozen=True)
class ReSoSettings:
    """How one question is planned, who may answer, how answers are judged, and the budgets."""

    pool: str = field(default="", metadata={"cli": True, "answers": False, "unset": "the default pool",
                                            "description": (
        "Pool YAML path (or replay:FILE[,FILE…] on the command line); empty: the default pool "
        "(agents/data/zeroeval_pool.yaml: twelve models' recorded answers to MATH level-5 and GSM8K questions, "
        "replayed offline, and the exact tool). Compared by content, not by path, on resume.")})
    db: str = field(default="", metadata={
        "cli": True, "envvar": "RESO_DB_URL", "unset": "$RESO_DB_URL, else the shipped or an in-memory DADB",
        "description": (
            "DADB: a SQLite file, a postgresql:// URL or a DADB export (.json, read-only; test runs); only a "
            "training run creates one. Empty: for a test run on the default pool the trained DADB shipped with it "
            "(agents/data/zeroeval_dadb.json), else in memory (reso eval: OUT/dadb.sqlite when training).")})
    mode: Mode = field(default=Mode.TEST, metadata={"cli": True, "description": (
        "train updates the DADB (and writes CRM records); test keeps it frozen.")})
    seed: int = field(default=0, metadata={"cli": True, "description": (
        "Seed of the selection's tie-breaks and draws, and of sampling.")})
    answer_value_usd: float = field(default=DEFAULT_ANSWER_VALUE_USD, metadata={
        "cli": True, "flag": "--answer-value", "description": (
            "The budget knob: what a right answer to your question is worth, in USD. Every cost decision reads "
            "it: the coarse stage ranks candidates by chance right x value - expected price, and the priced fine "
            "stage asks another candidate only while its expected gain in being right x value exceeds its price; "
            "there a step of a plan values its right answer at this times the chance that the steps it depends on "
            "were answered right. Low: one cheap candidate a step; high: the strongest models, checked. inf: "
            "price counts for nothing.")})
    plan: PlanSettings = field(default_factory=PlanSettings)
    selection: SelectorConfig = field(default_factory=SelectorConfig)
    asking: AskingConfig = field(default_factory=AskingConfig)
    reward: RewardSettings = field(default_factory=RewardSettings)
    limits: QuestionLimits = field(default_factory=QuestionLimits)

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "mode", Mode(self.mode))  # frozen: the text becomes its member once, here
        except ValueError:
            raise ValueError(f"unknown mode {self.mode!r}; choose one of {', '.join(Mode)}") from None
        object.__setattr__(self, "answer_value_usd", check_answer_value(self.answer_value_usd))
        selection_policy(self.selection.policy)  # an unknown name fails here, naming the registered ones

    def with_changes(self, changes: Mapping[str, Any], where: str = "settings") -> ReSoSettings:
        """These settings with `changes`: dotted keys (`{"asking.k": 3}`) or a mapping nested by section
        (`{"asking": {"k": 3}}`); `where` names their source in errors.

        Raises:
            ValueError: An unknown key (a former flat name says its key now), a value of the wrong type, or
                values that cannot go together.
        """
        for key, value in changes.items():
            if key in FORMER_NAMES and not isinstance(value, Mapping):  # `asking: {...}` is the section
                raise ValueError(f"{where}: {key} is now {FORMER_NAMES[key]}")
        return apply(self, changes, where)

    def replace(self, changes: Mapping[str, Any] | None = None, /, **run_wide: Any) -> ReSoSettings:
        """`with_changes`, with the run-wide settings also as keywords (`replace({"asking.k": 1}, mode="test")`)."""
        return self.with_changes({**(changes or {}), **run_wide})

    def values(self) -> dict[str, Any]:
        """Every setting by dotted key."""
        return flat_values(self)

    @classmethod
    def load(cls, path: str | Path) -> ReSoSettings:
        """The settings a YAML file gives (nested by section, or dotted keys), over the defaults: the file
        `reso eval --settings` and Studio's configuration accept. Sections of the commands (`run`, `backend`,
        `demo`) are theirs and left out here.
        """
        values = load_settings_file(Path(path))
        own = {key: value for key, value in values.items() if key.partition(".")[0] not in COMMAND_SECTIONS}
        return cls().with_changes(own, where=str(path))

    @classmethod
    def coerce(cls, value: ReSoSettings | Mapping[str, Any] | None) -> ReSoSettings:
        """Settings from an instance, a mapping (Studio sends JSON, nested by section), or None (defaults)."""
        if value is None:
            return cls()
        if isinstance(value, ReSoSettings):
            return value
        return cls().with_changes({k: v for k, v in value.items() if v is not None})


COMMAND_SECTIONS = ("run", "backend", "demo")
"""Sections a settings file may hold for the commands (`reso eval`, `reso demo`), which the settings skip."""

FORMER_NAMES: dict[str, str] = {
    "planner": "plan.planner", "planner_model": "plan.planner_model", "review_plan": "plan.review",
    "context_policy": "plan.context", "schedule": "plan.schedule", "integration": "plan.integration",
    "selection": "selection.policy", "score_variant": "selection.variant", "ucb_variant": "selection.variant",
    "top_m": "selection.top_m", "exploration": "selection.exploration_c", "embedder": "selection.embedder",
    "explore_when_frozen": "selection.explore_when_frozen",
    "asking": "asking.rule", "k": "asking.k", "k_max": "asking.k_max", "confidence": "asking.confidence",
    "peer_margin": "asking.peer_margin", "escalate_to": "asking.escalate_to", "skills": "asking.skills",
    "scorer": "reward.scorer", "scorer_sees_reference": "reward.sees_reference",
    "max_tokens": "limits.max_tokens", "max_usd": "limits.max_usd", "max_seconds": "limits.max_seconds",
    "call_timeout_s": "limits.call_timeout_s",
}
"""The flat names the settings had before they were a tree, and their keys now: provenance reads older
folders under them, and the command line names the new spelling of a flag that went away."""

ANSWER_SETTINGS: tuple[str, ...] = tuple(s.key for s in settings_of(ReSoSettings) if s.changes_answers)
"""The settings that change what a run answers or how it is judged (their metadata says so)."""
