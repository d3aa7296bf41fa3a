"""List prices (USD per million input / output tokens) for models whose price is public.

A pool may always state prices itself; a model that is neither priced in the pool nor listed here is
an error, never a silent $0 (the authors' release charged unknown models nothing). Prices are list prices
as published by the providers; check them before reporting costs for a paper.
"""

from __future__ import annotations

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
FREE_PROVIDERS = frozenset({"tool", "local"})


def list_price(model_name: str) -> tuple[float, float] | None:
    """The list price of `model_name`, or None when it is unknown."""
    if model_name in LIST_PRICES:
        return LIST_PRICES[model_name]
    prefixes = [known for known in LIST_PRICES if model_name.startswith(known)]
    return LIST_PRICES[max(prefixes, key=len)] if prefixes else None
