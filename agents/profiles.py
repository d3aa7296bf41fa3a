"""Agent profiles: who an agent is (model × role), what it costs, and the default role roster.

An agent in ReSo is a base model playing an expert role. Its profile text is what the selector embeds
and matches against a subtask; its system prompt is what the model is told when it answers.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import PurePath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from reso.agents.adapters.faults import FaultConfig


class AgentKind(StrEnum):
    """Whether an agent is a language model or an exact tool (`Agent.kind`, from its provider)."""

    LLM = "llm"
    TOOL = "tool"


SYSTEM_PROMPT_TEMPLATE = (
    "You are an expert in {role}. {profile}\n"
    "You are one member of a team solving a larger problem step by step. Read the earlier subtasks and "
    "their answers, reuse any values they already solved, reason step by step in your field, and end "
    "with the final answer in the form \\boxed{{ANSWER}}."
)


class Role(BaseModel):
    """An expert role: a name, a profile sentence (what it is good at) and an optional system prompt."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, description="Role name, e.g. 'Algebra'.")
    profile: str = Field(min_length=1, description="One or two sentences on what this expert is good at.")
    system_prompt: str | None = Field(
        default=None, description="System prompt; defaults to a template built from name and profile."
    )
    domain: str | None = Field(default=None, description="Domain label used for per-domain statistics.")

    def render_system_prompt(self) -> str:
        return self.system_prompt or SYSTEM_PROMPT_TEMPLATE.format(role=self.name, profile=self.profile)


class Provider(StrEnum):
    """The model providers (the part of a spec before the colon) that the code treats apart; any other name
    is handed to LangChain's `init_chat_model` as it is."""

    REPLAY = "replay"
    """Recorded answers: `replay:FILE[,FILE…]#MODEL`."""
    LOCAL = "local"
    """A model run in this process: `local:PATH`."""
    TOOL = "tool"
    """An exact tool (`reso.agents.adapters.tools`): `tool:NAME`."""
    OPENAI = "openai"
    AZURE_OPENAI = "azure_openai"
    ANTHROPIC = "anthropic"


# Model providers whose target names files: `replay:FILE[,FILE…]#MODEL`, `local:PATH`.
FILE_PROVIDERS = frozenset({Provider.REPLAY, Provider.LOCAL})


def model_name(spec: str) -> str:
    """The model's own name in a spec, free of file paths: the recorded model of `replay:FILES#MODEL`, the
    file name of `local:PATH`, else the part after the provider (`openai:gpt-4o-mini` → `gpt-4o-mini`).

    It is how the CRM knows a model across machines and installs (a replay spec holds absolute paths)."""
    provider, _, target = spec.partition(":")
    if provider == Provider.REPLAY:
        return target.rsplit("#", 1)[-1]
    if provider == Provider.LOCAL:
        return PurePath(target).name
    return target


def model_files(spec: str) -> list[str]:
    """The file names (no folders) a `replay:`/`local:` spec reads, in order; none for any other spec."""
    provider, _, target = spec.partition(":")
    if provider == Provider.REPLAY:
        return [PurePath(part).name for part in target.rsplit("#", 1)[0].split(",") if part]
    if provider == Provider.LOCAL:
        return [PurePath(target).name]
    return []


def portable_model(model: str) -> str:
    """A model as a CRM keys it: a `replay:`/`local:` spec (a run's records hold the spec, absolute paths and
    all) by its `model_name`; any other name as given."""
    provider, sep, _ = model.partition(":")
    return model_name(model) if sep and provider in FILE_PROVIDERS else model


class ModelSpec(BaseModel):
    """How to reach one chat model.

    `spec` is `provider:model` (anything `init_chat_model` knows), `openai:<model>` with a `base_url` for
    any OpenAI-compatible server, `local:<path>` for a transformers checkpoint, `replay:<file>#<model>`
    for recorded answers, or `tool:<name>` for a deterministic tool agent. The API key is never stored:
    `api_key_env` names the environment variable that holds it.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    spec: str = Field(min_length=3, pattern=r"^[A-Za-z0-9_.-]+:.+$")
    name: str | None = Field(default=None, description="Short name used in agent ids; defaults to the spec.")
    base_url: str | None = None
    api_key_env: str | None = None
    price_in: float | None = Field(default=None, ge=0, description="USD per million input tokens.")
    price_out: float | None = Field(default=None, ge=0, description="USD per million output tokens.")
    params: dict[str, Any] = Field(default_factory=dict, description="Extra chat-model keyword arguments.")
    strengths: str | None = Field(default=None, min_length=1, description=(
        "What the model is good at, in the pool author's words: added to the profile text of each of its agents, "
        "so retrieval can tell models apart where roles alone cannot (without it, the DADB's record decides)."))
    faults: FaultConfig | None = Field(default=None, description=(
        "Inject faults into a share of this model's calls (testing; see reso.agents.adapters.faults)."))

    @property
    def provider(self) -> str:
        return self.spec.split(":", 1)[0]

    @property
    def target(self) -> str:
        return self.spec.split(":", 1)[1]

    @property
    def model_name(self) -> str:
        """See `model_name`: the name the CRM and the method names know the model by."""
        return model_name(self.spec)

    @property
    def short_name(self) -> str:
        return self.name or self.target.rsplit("#", 1)[-1].rsplit("/", 1)[-1]


class Agent(BaseModel):
    """One selectable agent: a model playing a role, with its prices per million tokens."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    model: ModelSpec
    role: str
    profile: str
    system_prompt: str
    price_in: float = Field(ge=0, description="USD per million input tokens.")
    price_out: float = Field(ge=0, description="USD per million output tokens.")
    domain: str | None = None

    @property
    def kind(self) -> AgentKind:
        return AgentKind.TOOL if self.model.provider == Provider.TOOL else AgentKind.LLM

    def cost_usd(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.price_in + output_tokens * self.price_out) / 1_000_000


def _role(name: str, profile: str, domain: str) -> Role:
    return Role(name=name, profile=profile, domain=domain)


# The paper's nine expert roles (method.md §2), described in our own words, plus an arithmetic
# word-problem role that suits GSM8K-style subtasks.
PAPER_ROLES: tuple[Role, ...] = (
    _role("Mechanics", "Classical mechanics: forces, motion, energy, momentum, rotation and oscillations.",
          "physics"),
    _role("Electromagnetism", "Electric and magnetic fields, circuits, charges, induction and waves.",
          "physics"),
    _role("Thermodynamics and Optics", "Heat, entropy, gases, thermodynamic cycles, light, lenses and "
          "interference.", "physics"),
    _role("Inorganic Chemistry", "Elements, ionic compounds, coordination chemistry, stoichiometry and "
          "reactions in solution.", "chemistry"),
    _role("Organic Chemistry", "Carbon compounds, functional groups, reaction mechanisms and spectroscopy.",
          "chemistry"),
    _role("Physical Chemistry", "Quantum chemistry, kinetics, equilibria, spectroscopy and chemical "
          "thermodynamics.", "chemistry"),
    _role("Algebra", "Equations, polynomials, functions, inequalities, sequences and number theory.",
          "math"),
    _role("Probability and Statistics", "Counting, combinatorics, probability, expectation and "
          "statistics.", "math"),
    _role("Geometry", "Plane and solid geometry, trigonometry, coordinates, areas and volumes.", "math"),
)

ARITHMETIC_ROLE = _role(
    "Arithmetic Word Problems",
    "Everyday quantitative reasoning: money, rates, ages, percentages and multi-step arithmetic stories.",
    "arithmetic",
)

BUILTIN_ROLES: dict[str, Role] = {role.name: role for role in (*PAPER_ROLES, ARITHMETIC_ROLE)}
