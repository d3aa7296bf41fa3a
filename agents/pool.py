"""Agent pools: a YAML file listing agents explicitly or as models × roles (the paper's layout).

```yaml
name: my-pool
models:                      # crossed with `roles`
  - spec: openai:gpt-4o-mini
  - spec: openai:Qwen/Qwen2.5-7B-Instruct
    name: qwen7b
    base_url: http://localhost:8000/v1
    api_key_env: VLLM_API_KEY
    price_in: 0.0
    price_out: 0.0
roles: [Algebra, Geometry]    # built-in role names, or {name, profile, system_prompt, domain}
prices: my_prices.yaml       # optional price list (`reso.agents.adapters.prices`) for models without price_in/out
agents:                      # explicit agents, added as they are
  - id: calculator
    model: {spec: "tool:calculator"}
    role: Exact arithmetic
    profile: Evaluates arithmetic expressions over earlier answers exactly.
```

A model's `base_url` may read the environment: `${VAR}`, or `${VAR:-default}` when VAR is unset or empty
(`examples/pools/llamacpp.yaml`), so one pool file reaches a server on any port or host.

Relative paths inside `replay:` and `local:` specs (`replay:a.jsonl.gz,b.jsonl.gz#model` names several
files) and of `prices` resolve against the YAML file's folder, so a pool travels with its recordings.

A model's price, first found wins: `price_in`/`price_out` in the pool; nothing for tools and local models;
the pool's price list (exact name); for replay models, the shipped price list of the recorded models;
`LIST_PRICES`. Otherwise loading fails and names the model.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, overload

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from reso.agents.adapters.prices import (
    FREE_PROVIDERS,
    PriceList,
    PriceListError,
    list_price,
    load_price_list,
    vendored_price_list,
)
from reso.agents.profiles import BUILTIN_ROLES, FILE_PROVIDERS, Agent, ModelSpec, Provider, Role


class PoolError(ValueError):
    """A pool file or pool definition is invalid; the message names the file and the field."""


class ExplicitAgent(BaseModel):
    """An agent written out in full in the pool file."""

    model_config = ConfigDict(extra="forbid")

    id: str | None = None
    model: ModelSpec
    role: str = Field(min_length=1)
    profile: str = Field(min_length=1)
    system_prompt: str | None = None
    domain: str | None = None


class PoolConfig(BaseModel):
    """The validated content of a pool YAML file."""

    model_config = ConfigDict(extra="forbid")

    name: str = "pool"
    models: list[ModelSpec] = Field(default_factory=list)
    roles: list[str | Role] = Field(default_factory=list)
    agents: list[ExplicitAgent] = Field(default_factory=list)
    prices: str | None = Field(default=None, min_length=1, description=(
        "Price list file (relative to the pool file) for models the pool does not price itself."))

    @model_validator(mode="after")
    def _models_need_roles(self) -> PoolConfig:
        if self.models and not self.roles:
            raise ValueError("'models' are crossed with 'roles', but 'roles' is empty")
        if not self.models and not self.agents:
            raise ValueError("the pool has no agents: give 'models' and 'roles', or 'agents'")
        return self


class Pool(Sequence[Agent]):
    """An ordered, id-unique collection of agents."""

    def __init__(self, agents: Sequence[Agent], name: str = "pool", source: Path | None = None) -> None:
        seen: set[str] = set()
        for agent in agents:
            if agent.id in seen:
                raise PoolError(f"{source or name}: duplicate agent id {agent.id!r}")
            seen.add(agent.id)
        self._agents = list(agents)
        self._by_id = {agent.id: agent for agent in self._agents}
        self.name = name
        self.source = source

    @overload
    def __getitem__(self, index: int) -> Agent: ...

    @overload
    def __getitem__(self, index: slice) -> list[Agent]: ...

    def __getitem__(self, index: int | slice) -> Agent | list[Agent]:
        return self._agents[index]

    def __len__(self) -> int:
        return len(self._agents)

    def __iter__(self) -> Iterator[Agent]:
        return iter(self._agents)

    def get(self, agent_id: str) -> Agent:
        try:
            return self._by_id[agent_id]
        except KeyError:
            raise KeyError(f"no agent {agent_id!r} in pool {self.name!r}") from None

    @property
    def ids(self) -> list[str]:
        return [agent.id for agent in self._agents]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _resolve_role(entry: str | Role, where: str) -> Role:
    if isinstance(entry, Role):
        return entry
    if entry not in BUILTIN_ROLES:
        known = ", ".join(sorted(BUILTIN_ROLES))
        raise PoolError(f"{where}: unknown role {entry!r}; built-in roles are: {known}")
    return BUILTIN_ROLES[entry]


def _resolve_file(name: str, base_dir: Path) -> str:
    path = Path(name).expanduser()
    if path.is_absolute() or not (base_dir / path).exists():
        return name
    return str((base_dir / path).resolve())


def resolve_model_paths(model: ModelSpec, base_dir: Path | None) -> ModelSpec:
    """Make relative `replay:` / `local:` paths absolute against the pool file's folder."""
    if base_dir is None or model.provider not in FILE_PROVIDERS:
        return model
    target, sep, fragment = model.target.partition("#")
    files = target.split(",") if model.provider == Provider.REPLAY else [target]
    resolved = ",".join(_resolve_file(name, base_dir) for name in files)
    if resolved == target:
        return model
    return model.model_copy(update={"spec": f"{model.provider}:{resolved}{sep}{fragment}"})


_ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def expand_base_url(model: ModelSpec, where: str) -> ModelSpec:
    """`model` with the `${VAR}` / `${VAR:-default}` references in its `base_url` read from the environment.

    Raises:
        PoolError: A variable without a default is unset or empty (the message names it).
    """
    if not model.base_url or "${" not in model.base_url:
        return model

    def value(reference: re.Match[str]) -> str:
        name, default = reference.group(1), reference.group(2)
        found = os.environ.get(name, "")
        if found:
            return found
        if default is not None:
            return default
        raise PoolError(f"{where}.base_url: environment variable {name} is not set; set it, or give a "
                        f"default as ${{{name}:-http://…}}")

    return model.model_copy(update={"base_url": _ENV_REFERENCE.sub(value, model.base_url)})


def _prices(model: ModelSpec, where: str, price_list: PriceList | None) -> tuple[float, float]:
    if model.price_in is not None and model.price_out is not None:
        return model.price_in, model.price_out
    if model.price_in is not None or model.price_out is not None:
        raise PoolError(f"{where}: give both price_in and price_out, or neither")
    if model.provider in FREE_PROVIDERS:
        return 0.0, 0.0
    name = model.target.rsplit("#", 1)[-1]
    lists = [price_list] if price_list is not None else []
    if model.provider == Provider.REPLAY:
        lists.append(vendored_price_list())
    listed = next((found for found in (prices.get(name) for prices in lists) if found is not None), None)
    listed = listed or list_price(name)
    if listed is None:
        where_to = (f"the price list {price_list.source}" if price_list is not None
                    else "a price list (--prices FILE)")
        raise PoolError(
            f"{where}: no price known for model {model.spec!r}; set price_in and price_out "
            f"(USD per million tokens) in the pool file, or add the model to {where_to}"
        )
    return listed


def _price_list(config: PoolConfig, base_dir: Path | None, label: str) -> PriceList | None:
    if config.prices is None:
        return None
    path = Path(config.prices).expanduser()
    if base_dir is not None and not path.is_absolute():
        path = base_dir / path
    try:
        return load_price_list(path)
    except PriceListError as error:
        raise PoolError(f"{label}: field 'prices': {error}") from None


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_KEY_PARAM = re.compile(r"(?i)(api_?key|(^|_)token$|secret|password|credential)")


def _refuse_inline_keys(model: ModelSpec, where: str) -> None:
    """Keys come only from environment variables: a key written into the pool file would travel with it
    into shared folders and reports. Messages name the field, never its value."""
    if model.api_key_env is not None and not _ENV_NAME.match(model.api_key_env):
        raise PoolError(f"{where}.api_key_env: not an environment variable name (letters, digits and _); "
                        "it names the variable that holds the key, not the key itself")
    for name in model.params:
        if _KEY_PARAM.search(str(name)):
            raise PoolError(f"{where}.params.{name}: keys and tokens are not read from pool files; "
                            "put the key in an environment variable and name it with api_key_env")


def _check_params(model: ModelSpec, where: str) -> None:
    """A `params` key the model's client would not take (a typo such as `max_tokns`) is refused as the pool
    loads, naming the key, rather than failing the first call (`reso.agents.adapters.params`)."""
    from reso.agents.adapters.params import unknown_param

    problem = unknown_param(model)
    if problem is not None:
        raise PoolError(f"{where} ({model.short_name}): {problem}")


def build_pool(config: PoolConfig, source: Path | None = None) -> Pool:
    """Expand a validated pool config into agents (models × roles, then explicit agents)."""
    label = str(source) if source else config.name
    base_dir = source.parent if source else None
    agents: list[Agent] = []
    price_list = _price_list(config, base_dir, label)
    roles = [_resolve_role(entry, f"{label}: roles[{i}]") for i, entry in enumerate(config.roles)]
    for m_index, raw_model in enumerate(config.models):
        model = expand_base_url(resolve_model_paths(raw_model, base_dir), f"{label}: models[{m_index}]")
        _refuse_inline_keys(model, f"{label}: models[{m_index}]")
        _check_params(model, f"{label}: models[{m_index}]")
        price_in, price_out = _prices(model, f"{label}: models[{m_index}]", price_list)
        for role in roles:
            agents.append(
                Agent(
                    id=f"{_slug(model.short_name)}/{_slug(role.name)}",
                    model=model,
                    role=role.name,
                    profile=role.profile,
                    system_prompt=role.render_system_prompt(),
                    price_in=price_in,
                    price_out=price_out,
                    domain=role.domain,
                )
            )
    for a_index, explicit in enumerate(config.agents):
        where = f"{label}: agents[{a_index}].model"
        model = expand_base_url(resolve_model_paths(explicit.model, base_dir), where)
        _refuse_inline_keys(model, where)
        _check_params(model, where)
        price_in, price_out = _prices(model, where, price_list)
        role = Role(name=explicit.role, profile=explicit.profile, system_prompt=explicit.system_prompt)
        agents.append(
            Agent(
                id=explicit.id or f"{_slug(model.short_name)}/{_slug(explicit.role)}",
                model=model,
                role=explicit.role,
                profile=explicit.profile,
                system_prompt=role.render_system_prompt(),
                price_in=price_in,
                price_out=price_out,
                domain=explicit.domain,
            )
        )
    return Pool(agents, name=config.name, source=source)


def _format_validation_error(error: ValidationError, label: str) -> str:
    first = error.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or "(top level)"
    more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
    return f"{label}: field '{field}': {first['msg']}{more}"


def pool_from_dict(data: Any, source: Path | None = None) -> Pool:
    """Validate a parsed pool document and build the pool; errors name the source and the field."""
    label = str(source) if source else "pool"
    if not isinstance(data, dict):
        raise PoolError(f"{label}: a pool file must be a YAML mapping, got {type(data).__name__}")
    try:
        config = PoolConfig.model_validate(data)
    except ValidationError as error:
        raise PoolError(_format_validation_error(error, label)) from None
    return build_pool(config, source)


def load_pool(path: str | Path) -> Pool:
    """Load a pool YAML file."""
    source = Path(path)
    return pool_from_dict(read_pool_document(source), source.resolve())


def read_pool_document(source: Path) -> Any:
    """The parsed YAML of a pool file, not yet validated; errors name the file (and line)."""
    try:
        text = source.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PoolError(f"{source}: pool file not found") from None
    except UnicodeDecodeError as error:
        line = error.object.count(b"\n", 0, error.start) + 1
        raise PoolError(f"{source}:{line}: not valid UTF-8 (byte 0x{error.object[error.start]:02x} at offset "
                        f"{error.start})") from None
    except OSError as error:  # a folder, no permission, ...
        raise PoolError(f"{source}: cannot read the pool file: {error.strerror or error}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"{source}:{mark.line + 1}" if mark else str(source)
        raise PoolError(f"{where}: invalid YAML: {getattr(error, 'problem', error)}") from None
    return data
