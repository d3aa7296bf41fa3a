"""List prices (USD per million input / output tokens) for models whose price is public.

A pool may always state prices itself; a model that is neither priced in the pool nor listed in a price
list or here is an error, never a silent $0 (the authors' release charged unknown models nothing). Prices
are list prices as published by the providers; check them before reporting costs for a paper.

A price list is a YAML file `models: {<model name>: {input: <USD/M>, output: <USD/M>}}`, matched by the
exact model name. The package ships one for the models of the vendored ZeroEval recordings
(`agents/data/prices.yaml`, consulted for replay models); `--prices FILE` gives another.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from reso.agents.profiles import Provider

# Keyed by the model name as the provider spells it (the part after `provider:` or after `#` in a
# replay spec). Matching is exact, then by longest known prefix (so dated snapshots inherit a price).
LIST_PRICES: dict[str, tuple[float, float]] = {
    "gpt-4-1106-preview": (10.0, 30.0),
    "gpt-4-turbo": (10.0, 30.0),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.0),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1": (2.0, 8.0),
    "gpt-3.5-turbo-16k": (3.0, 4.0),
    "gpt-3.5-turbo": (0.50, 1.50),
    "mistralai/Mixtral-8x7B-Instruct-v0.1": (0.60, 0.60),
    "gemini-2.0-flash": (0.10, 0.40),
    "claude-3-5-sonnet": (3.0, 15.0),
    "claude-3.5-sonnet": (3.0, 15.0),
    "qwen-max": (1.60, 6.40),
    "qwen2.5-max": (1.60, 6.40),
    "deepseek-chat": (0.27, 1.10),
    "deepseek-v3": (0.27, 1.10),
}

# Providers whose calls cost no API money: deterministic tools and models on the user's own hardware.
FREE_PROVIDERS = frozenset({Provider.TOOL, Provider.LOCAL})


def list_price(model_name: str) -> tuple[float, float] | None:
    """The list price of `model_name`, or None when it is unknown."""
    if model_name in LIST_PRICES:
        return LIST_PRICES[model_name]
    prefixes = [known for known in LIST_PRICES if model_name.startswith(known)]
    return LIST_PRICES[max(prefixes, key=len)] if prefixes else None


class PriceListError(ValueError):
    """A price list file is missing or invalid; the message names the file (and the field)."""


class _Price(BaseModel):
    model_config = ConfigDict(extra="forbid")

    input: float = Field(ge=0, description="USD per million input tokens.")
    output: float = Field(ge=0, description="USD per million output tokens.")


class _PriceFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    models: dict[str, _Price]


@dataclass(frozen=True, slots=True)
class PriceList:
    """Prices by exact model name, and the file they came from."""

    source: Path
    prices: dict[str, tuple[float, float]]

    def get(self, model_name: str) -> tuple[float, float] | None:
        return self.prices.get(model_name)


@lru_cache(maxsize=8)
def _load(resolved: str, mtime_ns: int) -> PriceList:
    path = Path(resolved)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        raise PriceListError(f"{where}: invalid YAML: {getattr(error, 'problem', error)}") from None
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or error
        raise PriceListError(f"{path}: cannot read the price list: {reason}") from None
    try:
        parsed = _PriceFile.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise PriceListError(f"{path}: field '{field}': {first['msg']} (a price list is "
                             "`models: {NAME: {input: USD/M, output: USD/M}}`)") from None
    return PriceList(path, {name: (price.input, price.output) for name, price in parsed.models.items()})


def load_price_list(path: str | Path) -> PriceList:
    """Read a price list (once per process per file version).

    Raises:
        PriceListError: The file is missing, unreadable or not in the price-list layout.
    """
    resolved = Path(path).expanduser().resolve()
    try:
        mtime_ns = resolved.stat().st_mtime_ns
    except FileNotFoundError:
        raise PriceListError(f"{path}: price list not found") from None
    return _load(str(resolved), mtime_ns)


def vendored_price_list() -> PriceList:
    """The shipped list prices of the recorded models (late 2024; see the file's header)."""
    from reso.agents.defaults import vendored_prices_path

    return load_price_list(vendored_prices_path())
