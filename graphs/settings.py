"""Run-time settings of a ReSo run: the `settings` of its LangGraph context (`reso.graphs.context.RunContext`).

Every field has a default that runs offline on the default pool (with its trained DADB). Environment
variables are never read here: callers (the CLI, Studio's assistant context, the Python API) pass settings
explicitly. Settings are frozen, so hashable: the team built for them is kept per settings object (`reso.graphs.team.team_for`).

A field that takes one of a few names has a `StrEnum` type, defined once where the code that acts on it
lives (`Mode` with the DADB, `Variant` with the scoring formulas, `PlannerName` with the planners,
`EscalateTo` with the asking policies; the four below with the settings). Building settings turns each
such value into its enum member, or raises a `ValueError` naming the field and the allowed values: callers
(the CLI included) pass the text as given and check nothing themselves.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from enum import StrEnum
from typing import Any, get_type_hints

from reso.agents.dadb.base import Mode
from reso.agents.selection.config import Variant, check_answer_value
from reso.graphs.escalation import PEER_MARGIN, AskingRule, EscalateTo
from reso.graphs.planners.base import PlannerName

DEFAULT_ANSWER_VALUE_USD = 0.05
"""What a right answer to a question is worth when the settings do not say: five cents, fixed before any run
(not chosen on results)."""


class ContextPolicy(StrEnum):
    """Which earlier answers a subtask sees."""

    PARENTS = "parents"
    ANCESTORS = "ancestors"
    ALL = "all"


class Schedule(StrEnum):
    """When a subtask starts: as soon as its parents finish (`eager`), or in LangGraph supersteps (`waves`)."""

    EAGER = "eager"
    WAVES = "waves"


class Integration(StrEnum):
    """Who answers a plan's integration step: the pool's exact tool (`tool`), or the selector (`select`)."""

    TOOL = "tool"
    SELECT = "select"


class SelectionPolicy(StrEnum):
    """How the coarse stage chooses candidates: ReSo's bandit over the profile index, or at random."""

    REPUTATION = "reputation"
    RANDOM = "random"


@dataclass(kw_only=True, frozen=True)
class ReSoSettings:
    """How one question is planned, who may answer, how answers are judged, and the budgets."""

    pool: str = field(default="", metadata={"description": (
        "Pool YAML path; empty = the default pool (agents/data/zeroeval_pool.yaml: twelve models' recorded "
        "answers to MATH level-5 and GSM8K questions, replayed offline, and the exact tool).")})
    planner: PlannerName = field(default=PlannerName.AUTO, metadata={
        "description": "auto | structural | llm | given."})
    planner_model: str = field(default="", metadata={"description": "Model spec for the LLM planner."})
    asking: AskingRule = field(default=AskingRule.PRICED, metadata={"description": (
        "How the fine stage decides whether to ask another candidate: priced (while the expected gain in being "
        "right x answer_value_usd exceeds its price, up to k_max answers), confidence (while the best score is "
        "below confidence, up to k_max), fixed (k at once, the paper's).")})
    k: int = field(default=2, metadata={"description": (
        "Candidates answering each subtask at once (asking fixed; the first stage of asking confidence).")})
    k_max: int | None = field(default=None, metadata={"description": (
        "At most this many candidates answer a subtask (asking priced: None means 4; asking confidence: "
        "required).")})
    confidence: float | None = field(default=None, metadata={"description": (
        "Asking confidence: ask one more candidate while the best CRM score is below this (with k_max).")})
    peer_margin: float = field(default=PEER_MARGIN, metadata={"description": (
        "Asking confidence: of the first k, a candidate whose model's training record is more than this below "
        "the first candidate's does not answer (1: all k answer).")})
    escalate_to: EscalateTo = field(default=EscalateTo.RANKED, metadata={"description": (
        "Asking confidence: which candidate an escalation asks, among those of models not yet asked that are "
        "more likely right than the best answer so far: ranked, the first in the coarse stage's cost-aware "
        "order; reliable, the one with the best training record whatever its price; diverse (for peers, with the "
        "peer posterior CRM), among models within peer_margin of the best remaining record, the one whose "
        "mistakes go least with those already asked, even if none is more likely right; diverse-priced, the same "
        "with each record net of its price (the coarse stage's cost penalty in record points).")})
    integration: Integration = field(default=Integration.TOOL, metadata={"description": (
        "tool: a plan's integration step (the final step of a plan of several, `TaskDAG.role`) goes to the "
        "pool's exact tool for every method, when the pool has one; select: chosen like any other subtask.")})
    top_m: int = field(default=16, metadata={"description": "Agents retrieved from the profile index before scoring."})
    selection: SelectionPolicy = field(
        default=SelectionPolicy.REPUTATION,
        metadata={"description": "reputation (ReSo's bandit score, `score_variant`) or random (the paper's ablation)."}
    )
    score_variant: Variant = field(
        default=Variant.THOMPSON,
        metadata={"description": "Coarse-stage score: Thompson sampling (default), KL-UCB, MOSS, cost-normalised UCB "
                  "or the paper's UCB (see reso.agents.selection.scoring)."},
    )
    answer_value_usd: float = field(default=DEFAULT_ANSWER_VALUE_USD, metadata={"description": (
        "The budget knob: what a right answer to your question is worth to you, in USD. Every cost decision "
        "reads it: the coarse stage ranks candidates by chance right x value - expected price, and the priced "
        "fine stage asks another candidate only while its expected gain in being right x value exceeds its "
        "price; there a step of a plan values its right answer at this times the chance that the steps it depends "
        "on were answered right. Low: one cheap candidate a step; high: the strongest models, checked. inf: price "
        "counts for nothing.")})
    scorer: str = field(default="consensus", metadata={"description": "CRM scorer spec (see reso.reward.registry)."})
    skills: str = field(default="", metadata={"description": (
        "A question-skills folder (reso.agents.selection.question_skills): each model's chance on a subtask read "
        "from its record on the nearest past subtasks, for the priced fine stage; empty: its pooled record.")})
    scorer_sees_reference: bool = field(
        default=False,
        metadata={"description": "Hand ground truth to the scorer (the oracle baseline only; never for ReSo)."},
    )
    mode: Mode = field(default=Mode.TEST, metadata={"description": "train updates the DADB; test keeps it frozen."})
    exploration: float | None = field(default=None, metadata={"description": (
        "Exploration constant of the selection policy (None: the policy's default; 1 is plain Thompson "
        "sampling; a learning-only training run may want more than routing does).")})
    explore_when_frozen: bool = field(
        default=False,
        metadata={"description": "Keep the exploration bonus in test mode (default: exploit what was learned)."},
    )
    db: str = field(default="", metadata={"description": (
        "DADB: a SQLite file, a postgresql:// URL or a DADB export (.json, read-only); empty = for a test run on "
        "the default pool the trained DADB shipped with it (agents/data/zeroeval_dadb.json), else in memory "
        "for this process.")})
    embedder: str = field(default="minilm", metadata={"description": "Embedder spec for profiles and subtasks."})
    context_policy: ContextPolicy = field(
        default=ContextPolicy.PARENTS, metadata={"description": "Which earlier answers a subtask sees."}
    )
    schedule: Schedule = field(
        default=Schedule.EAGER,
        metadata={"description": "eager: a subtask starts as soon as its parents finish; waves: LangGraph supersteps."},
    )
    review_plan: bool = field(default=False, metadata={"description": "Pause after planning so the plan can be edited."})
    call_timeout_s: float = field(default=120.0, metadata={"description": "Time limit of one agent call."})
    max_tokens: int | None = field(default=None, metadata={"description": "Token budget per question."})
    max_usd: float | None = field(default=None, metadata={"description": "USD budget per question."})
    max_seconds: float | None = field(default=None, metadata={"description": "Wall-time budget per question."})
    seed: int = field(default=0, metadata={"description": "Seed for tie-breaks and random selection."})

    def __post_init__(self) -> None:
        for name, kind in _KINDS.items():
            value = getattr(self, name)
            try:
                member = kind(value)
            except ValueError:
                raise ValueError(f"unknown {name} {value!r}; choose one of {', '.join(kind)}") from None
            object.__setattr__(self, name, member)
        object.__setattr__(self, "answer_value_usd", check_answer_value(self.answer_value_usd))
        if self.confidence is not None and self.asking != AskingRule.CONFIDENCE:
            raise ValueError(f"confidence is read by asking 'confidence' only (asking is {self.asking.value!r}): "
                             "set asking to 'confidence', or leave confidence out")

    def replace(self, **changes: Any) -> ReSoSettings:
        known = {f.name for f in fields(self)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise ValueError(f"unknown setting(s): {', '.join(unknown)}")
        return ReSoSettings(**{**asdict(self), **changes})

    @classmethod
    def coerce(cls, value: ReSoSettings | Mapping[str, Any] | None) -> ReSoSettings:
        """Settings from an instance, a plain mapping (Studio sends JSON), or None (defaults)."""
        if value is None:
            return cls()
        if isinstance(value, ReSoSettings):
            return value
        return cls().replace(**{k: v for k, v in value.items() if v is not None})


# The settings whose value is one of a kind's names, with that kind: read off the fields' types.
_KINDS: dict[str, type[StrEnum]] = {
    name: hint for name, hint in get_type_hints(ReSoSettings).items()
    if isinstance(hint, type) and issubclass(hint, StrEnum)
}
